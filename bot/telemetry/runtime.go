package telemetry

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// Build names the running binary in brain_build_info.
type Build struct {
	Version string // "dev" when empty
	Commit  string // from the build's VCS stamp when empty
}

// Standard is the Prometheus Go client's registry of what the ecosystem
// expects from every Go service: go_* (runtime: goroutines, GC, memory),
// process_* (CPU, resident memory, open files) and
// brain_build_info{version,commit,goversion}. brain's own families stay
// in Registry (see docs/operations.md, Metrics, for why); Registry.Write
// writes both.
func Standard(b Build) *prometheus.Registry {
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					b.Commit = s.Value
				}
			}
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "brain_build_info",
			Help:        "Always 1; the labels name the running build.",
			ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": runtime.Version()},
		}, func() float64 { return 1 }),
	)
	return reg
}

// Include makes Write add g's families (Standard's) before the registry's
// own. Call it before serving.
func (r *Registry) Include(g prometheus.Gatherer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gatherers = append(r.gatherers, g)
}

// writeGathered writes the included gatherers' families in the text
// format 0.0.4.
func (r *Registry) writeGathered(w io.Writer) error {
	r.mu.Lock()
	gs := append([]prometheus.Gatherer(nil), r.gatherers...)
	r.mu.Unlock()
	for _, g := range gs {
		mfs, err := g.Gather()
		if err != nil {
			return fmt.Errorf("gather metrics: %w", err)
		}
		enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				return fmt.Errorf("write metrics: %w", err)
			}
		}
	}
	return nil
}
