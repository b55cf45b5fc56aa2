package telemetry

import (
	"context"
	"log/slog"
	"time"
	"unicode/utf8"

	"brain/bot/config"
	"brain/engine"
	"brain/store"
	"brain/tools"
)

// notOffered is the tool label of calls to tools the turn did not offer,
// so a model inventing names cannot grow the metric's series.
const notOffered = "(not offered)"

// Metrics is brain's metrics and activity log: the engine's Observer, the
// wrapper of every model, and the delivery observer of the bridges.
type Metrics struct {
	log      *slog.Logger
	turns    *Counter
	turnDur  *Histogram
	toolDur  *Histogram
	modelDur *Histogram
	tokens   *Counter
	cost     *Counter
	delivery *Histogram
}

var _ engine.Observer = (*Metrics)(nil)

// NewMetrics registers the turn, tool, model and delivery metrics in reg;
// activity lines go to log.
func NewMetrics(reg *Registry, log *slog.Logger) *Metrics {
	b := DurationBuckets
	return &Metrics{
		log:      log,
		turns:    reg.Counter("brain_turns_total", "Turns ended, by outcome (completed, question, max_iterations, cancelled, failed).", "outcome"),
		turnDur:  reg.Histogram("brain_turn_duration_seconds", "How long turns took, from start to their recorded end, by outcome.", b, "outcome"),
		toolDur:  reg.Histogram("brain_tool_call_duration_seconds", "Tool call latency, by tool and whether the call was an error.", b, "tool", "outcome"),
		modelDur: reg.Histogram("brain_model_call_duration_seconds", "Model call latency (SDK retries included), by model and whether the call failed.", b, "model", "outcome"),
		tokens: reg.Counter("brain_model_tokens_total", "Tokens the models reported, by model and kind (input: all input tokens, "+
			"cache_read and cache_write: the part of them read from or written to the prompt cache, output).", "model", "kind"),
		cost:     reg.Counter("brain_model_cost_usd_total", "Estimated cost in US dollars of the models' tokens, by model (models with a price only).", "model"),
		delivery: reg.Histogram("brain_delivery_duration_seconds", "Time to render a session's new events on its platform, per delivery, by platform and outcome.", b, "platform", "outcome"),
	}
}

func okOrError(failed bool) string {
	if failed {
		return "error"
	}
	return "ok"
}

func (t *Metrics) TurnStarted(ti engine.TurnInfo) {
	t.log.Info("turn started", tools.LogSession, ti.SessionID, tools.LogTurn, ti.TurnID,
		tools.LogOrigin, ti.Origin, tools.LogAgent, ti.Agent, tools.LogInputs, ti.Inputs)
}

func (t *Metrics) TurnEnded(ti engine.TurnInfo, end engine.TurnEnd) {
	t.turns.Inc(string(end.Outcome))
	t.turnDur.Observe(end.Duration.Seconds(), string(end.Outcome))
	attrs := []any{tools.LogSession, ti.SessionID, tools.LogTurn, ti.TurnID, tools.LogOrigin, ti.Origin, tools.LogOutcome, end.Outcome,
		tools.LogDuration, end.Duration.Round(time.Millisecond).String(), tools.LogRounds, end.Rounds,
		tools.LogInputTokens, end.Usage.InputTokens, tools.LogOutputTokens, end.Usage.OutputTokens,
		tools.LogCacheRead, end.Usage.CacheReadTokens, tools.LogCacheWrite, end.Usage.CacheWriteTokens}
	if end.Outcome == engine.OutcomeFailed {
		t.log.Warn("turn failed", append(attrs, tools.LogCode, end.Code)...)
		return
	}
	t.log.Info("turn ended", attrs...)
}

func (t *Metrics) ToolReturned(ti engine.TurnInfo, r engine.ToolReturn) {
	name := r.Tool
	if !r.Offered {
		name = notOffered
	}
	t.toolDur.Observe(r.Duration.Seconds(), name, okOrError(r.IsError))
	if r.IsError {
		t.log.Warn("tool call failed", tools.LogSession, ti.SessionID, tools.LogTurn, ti.TurnID, tools.LogTool, r.Tool,
			tools.LogUnknown, r.Unknown, tools.LogDuration, r.Duration.Round(time.Millisecond).String(), tools.LogReason, clip(r.Text, 300))
	}
}

// ObserveModel wraps m so its calls are timed and its tokens counted
// (and priced, when price is set) under the model's name.
func (t *Metrics) ObserveModel(name string, price *config.PriceConfig, m engine.Model) engine.Model {
	return observedModel{t: t, name: name, price: price, next: m}
}

type observedModel struct {
	t     *Metrics
	name  string
	price *config.PriceConfig
	next  engine.Model
}

func (m observedModel) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	start := time.Now()
	resp, err := m.next.Generate(ctx, req)
	m.t.modelDur.Observe(time.Since(start).Seconds(), m.name, okOrError(err != nil))
	if err == nil {
		m.t.tokens.Add(float64(resp.Usage.InputTokens), m.name, "input")
		m.t.tokens.Add(float64(resp.Usage.OutputTokens), m.name, "output")
		m.t.tokens.Add(float64(resp.Usage.CacheReadTokens), m.name, "cache_read")
		m.t.tokens.Add(float64(resp.Usage.CacheWriteTokens), m.name, "cache_write")
		if u := resp.Usage; m.price != nil {
			m.t.cost.Add(m.price.Cost(u.UncachedInputTokens(), u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens), m.name)
		}
	}
	return resp, err
}

// ObserveDelivery returns the bridges' delivery observer for platform.
func (t *Metrics) ObserveDelivery(platform string) func(time.Duration, error) {
	return func(d time.Duration, err error) {
		t.delivery.Observe(d.Seconds(), platform, okOrError(err != nil))
	}
}

// RegisterInbox exports the inbox backlog per source: depth and the age
// of the oldest pending item (0 when none), each configured source always
// present.
func RegisterInbox(reg *Registry, health store.Health, sources []string, clock func() time.Time, log *slog.Logger) {
	read := func() []store.InboxBacklog {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		got, err := health.InboxBacklogs(ctx)
		if err != nil {
			log.Warn("read inbox backlog for metrics", tools.LogErr, err)
		}
		out := make([]store.InboxBacklog, 0, len(sources))
		for _, src := range sources {
			b := store.InboxBacklog{Source: src}
			for _, g := range got {
				if g.Source == src {
					b = g
				}
			}
			out = append(out, b)
		}
		return out
	}
	reg.GaugeFunc("brain_inbox_depth", "Inbound platform events recorded and not yet worked, by source.", []string{"source"}, func() []Sample {
		var out []Sample
		for _, b := range read() {
			out = append(out, Sample{Labels: []string{b.Source}, Value: float64(b.Depth)})
		}
		return out
	})
	reg.GaugeFunc("brain_inbox_oldest_age_seconds", "Age of the oldest pending inbound event, by source.", []string{"source"}, func() []Sample {
		var out []Sample
		now := clock()
		for _, b := range read() {
			age := 0.0
			if !b.Oldest.IsZero() {
				age = max(0, now.Sub(b.Oldest).Seconds())
			}
			out = append(out, Sample{Labels: []string{b.Source}, Value: age})
		}
		return out
	})
}

// clip shortens s to at most n bytes (whole runes) for a log line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
