package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"brain/bot/telemetry"
	"brain/engine"
	"brain/tools"
)

// registerMetrics adds the API's own metrics to reg: HTTP requests by
// status, the worker pool's gauges and the engine's counters.
func (a *Server) registerMetrics(reg *telemetry.Registry) {
	a.requests = reg.Counter("brain_http_requests_total", "HTTP requests answered, by status code.", "code")
	reg.CounterFunc("brain_auth_failures_total",
		"Requests and console sign-ins refused for their API key, by reason: invalid_key (wrong or missing), throttled (refused unread after repeated wrong keys).",
		[]string{"reason"}, func() []telemetry.Sample {
			invalid, throttled := a.keys.Refused()
			return []telemetry.Sample{{Labels: []string{"invalid_key"}, Value: float64(invalid)}, {Labels: []string{"throttled"}, Value: float64(throttled)}}
		})
	gauge := func(name, help string, v func(engine.Stats) int) {
		reg.GaugeFunc(name, help, nil, func() []telemetry.Sample {
			return []telemetry.Sample{{Value: float64(v(a.engine.Stats()))}}
		})
	}
	gauge("brain_turns_running", "Turns running now.", func(s engine.Stats) int { return s.RunningTurns })
	gauge("brain_turns_queued", "Sessions with input waiting for a worker.", func(s engine.Stats) int { return s.QueuedTurns })
	// Integrations are reported here and on /readyz?verbose, never gating.
	reg.GaugeFunc("brain_integration_up", "1 when an integration (slack, linear, mcp, schedules) answers its readiness check, else 0. Never gates /readyz.", []string{"name"}, func() []telemetry.Sample {
		var out []telemetry.Sample
		for _, c := range a.runChecks(context.Background(), true) {
			if c.Integration {
				out = append(out, telemetry.Sample{Labels: []string{c.Name}, Value: map[bool]float64{true: 1}[c.OK]})
			}
		}
		return out
	})
	for _, f := range engineFamilies {
		reg.CounterFunc(f.name, f.help, f.labels(), func() []telemetry.Sample {
			return f.samples(a.engine.Stats().Counters)
		})
	}
}

// engineFamily exports engine counters: the one named counter, or with a
// label, every counter named prefix+VALUE (approvals_approved ->
// brain_approvals_total{status="approved"}), so statuses are labels, never
// parts of metric names.
type engineFamily struct {
	name, help string
	counter    string // exact engine counter name
	prefix     string // or: a prefix whose rest is the label value
	label      string
}

var engineFamilies = []engineFamily{
	{name: "brain_sessions_created_total", help: "Sessions created.", counter: "sessions_created"},
	{name: "brain_inputs_total", help: "Inputs recorded (messages and answers).", counter: "inputs"},
	{name: "brain_inputs_rate_limited_total", help: "Messages a rate limit (rate_limits) deferred: recorded, told when they run, run then.", counter: engine.CounterDeferred},
	{name: "brain_turns_started_total", help: "Turns started.", counter: "turns"},
	{name: "brain_model_calls_total", help: "Model calls that answered.", counter: "model_calls"},
	{name: "brain_tool_calls_total", help: "Tool calls dispatched after validation.", counter: "tool_calls"},
	{name: "brain_sessions_stopped_total", help: "Turns that stopped their session, by the status it was left in.", prefix: "turns_", label: "status"},
	{name: "brain_approvals_total", help: "Approval decisions and expiries, by status.", prefix: "approvals_", label: "status"},
	{name: "brain_feedback_total", help: "Feedback given on replies, by rating.", prefix: "feedback_", label: "rating"},
	{name: "brain_memory_changes_total", help: "Memory files changed by the memory tool (memory.changed).", counter: "memory_changes"},
	{name: "brain_context_compactions_total", help: "Context compactions (context.compacted), by reason (budget, provider, requested).", prefix: "compactions_", label: "reason"},
}

func (f engineFamily) labels() []string {
	if f.label == "" {
		return nil
	}
	return []string{f.label}
}

func (f engineFamily) samples(counters map[string]int64) []telemetry.Sample {
	if f.counter != "" {
		return []telemetry.Sample{{Value: float64(counters[f.counter])}}
	}
	var out []telemetry.Sample
	for name, v := range counters {
		if rest, ok := strings.CutPrefix(name, f.prefix); ok && rest != "" {
			out = append(out, telemetry.Sample{Labels: []string{rest}, Value: float64(v)})
		}
	}
	return out
}

func (a *Server) countStatus(status int) {
	if status == 0 {
		status = http.StatusOK // nothing written: net/http sends 200
	}
	a.requests.Inc(strconv.Itoa(status))
}

func (a *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if err := a.registry.Write(w); err != nil {
		a.log.Debug("write metrics", tools.LogErr, err)
	}
}
