// Package telemetry is what brain tells its operators about itself: a
// small Prometheus registry of brain's own families (Registry: counters
// and histograms with labels, gauges and counters read at scrape time,
// written in the Prometheus text exposition format 0.0.4) beside the
// Prometheus Go client's runtime, process and build_info collectors
// (Standard), the activity log lines and metrics of turns,
// tools, models and deliveries (Metrics), and OpenTelemetry spans of the
// same (Tracing). It sees the engine through its Observer and Model
// interfaces; it never imports a platform, a store driver or bot.
package telemetry

import (
	"bufio"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DurationBuckets are the histogram buckets, in seconds, of brain's
// latencies: from a fast tool call to a long turn.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Registry holds metric families and writes them sorted by name. It is safe
// for concurrent use.
type Registry struct {
	mu        sync.Mutex
	fams      map[string]*family
	gatherers []prometheus.Gatherer // see Include
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{fams: map[string]*family{}} }

// Sample is one value of a family read at scrape time, with its label
// values in the family's label order.
type Sample struct {
	Labels []string
	Value  float64
}

type family struct {
	name, help, typ string
	labels          []string
	buckets         []float64       // histograms
	collect         func() []Sample // gauges and counters read at scrape time

	mu     sync.Mutex
	series map[string]*series // by label values joined with \xff
}

type series struct {
	labels []string
	value  float64  // counter
	counts []uint64 // histogram, per bucket (not cumulative)
	sum    float64
	count  uint64
}

func (r *Registry) add(f *family) *family {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.fams[f.name]; dup {
		panic("metrics: " + f.name + " registered twice")
	}
	f.series = map[string]*series{}
	r.fams[f.name] = f
	return f
}

// Counter is a monotonically increasing total per label values.
type Counter struct{ f *family }

// Counter registers a counter; by convention its name ends in _total.
func (r *Registry) Counter(name, help string, labels ...string) *Counter {
	return &Counter{r.add(&family{name: name, help: help, typ: "counter", labels: labels})}
}

// Inc adds one to the series of the given label values.
func (c *Counter) Inc(labelValues ...string) { c.Add(1, labelValues...) }

// Add adds v (never negative) to the series of the given label values.
func (c *Counter) Add(v float64, labelValues ...string) {
	if v < 0 {
		return
	}
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	c.f.get(labelValues).value += v
}

// Histogram counts observations into buckets per label values.
type Histogram struct{ f *family }

// Histogram registers a histogram with the given upper bounds (ascending;
// +Inf is implied).
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *Histogram {
	return &Histogram{r.add(&family{name: name, help: help, typ: "histogram", labels: labels, buckets: buckets})}
}

// Observe records v in the series of the given label values.
func (h *Histogram) Observe(v float64, labelValues ...string) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	s := h.f.get(labelValues)
	if s.counts == nil {
		s.counts = make([]uint64, len(h.f.buckets))
	}
	if i, _ := slices.BinarySearch(h.f.buckets, v); i < len(h.f.buckets) {
		s.counts[i]++
	}
	s.sum += v
	s.count++
}

// GaugeFunc registers a gauge whose samples collect returns at each scrape.
func (r *Registry) GaugeFunc(name, help string, labels []string, collect func() []Sample) {
	r.add(&family{name: name, help: help, typ: "gauge", labels: labels, collect: collect})
}

// CounterFunc registers a counter kept elsewhere, read at each scrape.
func (r *Registry) CounterFunc(name, help string, labels []string, collect func() []Sample) {
	r.add(&family{name: name, help: help, typ: "counter", labels: labels, collect: collect})
}

// get returns the series of values, creating it; f.mu is held.
func (f *family) get(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: %s takes labels %v, got %d values", f.name, f.labels, len(values)))
	}
	key := strings.Join(values, "\xff")
	s := f.series[key]
	if s == nil {
		s = &series{labels: slices.Clone(values)}
		f.series[key] = s
	}
	return s
}

// Write writes every family in the text exposition format: the included
// gatherers' first, then its own sorted by name and each family's series
// by label values.
func (r *Registry) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if err := r.writeGathered(bw); err != nil {
		return err
	}
	r.mu.Lock()
	fams := make([]*family, 0, len(r.fams))
	for _, f := range r.fams {
		fams = append(fams, f)
	}
	r.mu.Unlock()
	slices.SortFunc(fams, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	for _, f := range fams {
		f.write(bw)
	}
	return bw.Flush()
}

func (f *family) write(w *bufio.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
	if f.collect != nil {
		samples := f.collect()
		slices.SortFunc(samples, func(a, b Sample) int { return slices.Compare(a.Labels, b.Labels) })
		for _, s := range samples {
			fmt.Fprintf(w, "%s%s %s\n", f.name, labelSet(f.labels, s.Labels, "", ""), formatFloat(s.Value))
		}
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]string, 0, len(f.series))
	for k := range f.series {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := f.series[k]
		if f.typ != "histogram" {
			fmt.Fprintf(w, "%s%s %s\n", f.name, labelSet(f.labels, s.labels, "", ""), formatFloat(s.value))
			continue
		}
		var cum uint64
		for i, le := range f.buckets {
			cum += s.counts[i]
			fmt.Fprintf(w, "%s_bucket%s %d\n", f.name, labelSet(f.labels, s.labels, "le", formatFloat(le)), cum)
		}
		fmt.Fprintf(w, "%s_bucket%s %d\n", f.name, labelSet(f.labels, s.labels, "le", "+Inf"), s.count)
		fmt.Fprintf(w, "%s_sum%s %s\n", f.name, labelSet(f.labels, s.labels, "", ""), formatFloat(s.sum))
		fmt.Fprintf(w, "%s_count%s %d\n", f.name, labelSet(f.labels, s.labels, "", ""), s.count)
	}
}

// labelSet renders {a="x",b="y"} (nothing without labels), with an extra
// label (the histogram's le) when extra is set.
func labelSet(names, values []string, extra, extraValue string) string {
	if len(names) == 0 && extra == "" {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		v := ""
		if i < len(values) {
			v = values[i]
		}
		fmt.Fprintf(&b, "%s=\"%s\"", n, escapeValue(v))
	}
	if extra != "" {
		if len(names) > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=\"%s\"", extra, extraValue)
	}
	b.WriteByte('}')
	return b.String()
}

var (
	valueEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeValue(s string) string { return valueEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
