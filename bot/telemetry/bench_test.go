package telemetry

import (
	"io"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// The benchmarks behind keeping brain's own families on Registry beside
// the Go client (docs/operations.md, Metrics): the same labelled counter
// and histogram on both, and a scrape of 200 series.

func BenchmarkCounterInc_Registry(b *testing.B) {
	c := NewRegistry().Counter("brain_x_total", "x", "tool")
	for b.Loop() {
		c.Inc("lookup")
	}
}

func BenchmarkCounterInc_ClientGolang(b *testing.B) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brain_x_total", Help: "x"}, []string{"tool"})
	for b.Loop() {
		c.WithLabelValues("lookup").Inc()
	}
}

func BenchmarkHistogramObserve_Registry(b *testing.B) {
	h := NewRegistry().Histogram("brain_x_seconds", "x", DurationBuckets, "tool", "outcome")
	for b.Loop() {
		h.Observe(0.3, "lookup", "ok")
	}
}

func BenchmarkHistogramObserve_ClientGolang(b *testing.B) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brain_x_seconds", Help: "x", Buckets: DurationBuckets}, []string{"tool", "outcome"})
	for b.Loop() {
		h.WithLabelValues("lookup", "ok").Observe(0.3)
	}
}

var toolNames = func() []string {
	var out []string
	for i := range 200 {
		out = append(out, "tool"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	return out
}()

func BenchmarkScrape200Histograms_Registry(b *testing.B) {
	r := NewRegistry()
	h := r.Histogram("brain_x_seconds", "x", DurationBuckets, "tool")
	for _, n := range toolNames {
		h.Observe(0.3, n)
	}
	for b.Loop() {
		if err := r.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScrape200Histograms_ClientGolang(b *testing.B) {
	r := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brain_x_seconds", Help: "x", Buckets: DurationBuckets}, []string{"tool"})
	r.MustRegister(h)
	for _, n := range toolNames {
		h.WithLabelValues(n).Observe(0.3)
	}
	for b.Loop() {
		mfs, err := r.Gather()
		if err != nil {
			b.Fatal(err)
		}
		enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
	}
}
