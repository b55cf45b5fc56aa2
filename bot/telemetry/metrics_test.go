package telemetry_test

import (
	"strings"
	"testing"

	"brain/bot/telemetry"
)

func TestRegistry_TextExposition(t *testing.T) {
	r := telemetry.NewRegistry()
	turns := r.Counter("brain_turns_total", "Turns ended, by outcome.", "outcome")
	dur := r.Histogram("brain_tool_call_duration_seconds", "Tool call latency.", []float64{0.1, 1}, "tool")
	r.GaugeFunc("brain_inbox_depth", "Pending inbox items.", []string{"source"}, func() []telemetry.Sample {
		return []telemetry.Sample{{Labels: []string{"slack"}, Value: 3}, {Labels: []string{"linear"}, Value: 0}}
	})
	r.CounterFunc("brain_inputs_total", "Inputs recorded.", nil, func() []telemetry.Sample {
		return []telemetry.Sample{{Value: 7}}
	})
	turns.Inc("completed")
	turns.Inc("completed")
	turns.Add(1, `we"ird\`+"\n")
	dur.Observe(0.1, "web_fetch") // on a bound: counted in it
	dur.Observe(0.5, "web_fetch")
	dur.Observe(3, "web_fetch")

	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP brain_inbox_depth Pending inbox items.
# TYPE brain_inbox_depth gauge
brain_inbox_depth{source="linear"} 0
brain_inbox_depth{source="slack"} 3
# HELP brain_inputs_total Inputs recorded.
# TYPE brain_inputs_total counter
brain_inputs_total 7
# HELP brain_tool_call_duration_seconds Tool call latency.
# TYPE brain_tool_call_duration_seconds histogram
brain_tool_call_duration_seconds_bucket{tool="web_fetch",le="0.1"} 1
brain_tool_call_duration_seconds_bucket{tool="web_fetch",le="1"} 2
brain_tool_call_duration_seconds_bucket{tool="web_fetch",le="+Inf"} 3
brain_tool_call_duration_seconds_sum{tool="web_fetch"} 3.6
brain_tool_call_duration_seconds_count{tool="web_fetch"} 3
# HELP brain_turns_total Turns ended, by outcome.
# TYPE brain_turns_total counter
brain_turns_total{outcome="completed"} 2
brain_turns_total{outcome="we\"ird\\\n"} 1
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestRegistry_MisuseIsLoud(t *testing.T) {
	r := telemetry.NewRegistry()
	c := r.Counter("brain_x_total", "x", "a")
	for name, f := range map[string]func(){
		"twice":        func() { r.Counter("brain_x_total", "x") },
		"label values": func() { c.Inc() },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
