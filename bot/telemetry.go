package bot

import (
	"context"
	"log/slog"
	"time"
	"unicode/utf8"

	"brain/bot/config"
	"brain/bot/linearbridge"
	"brain/bot/metrics"
	"brain/bot/slackbridge"
	"brain/engine"
	"brain/engine/durable"
	"brain/tools"
)

// Log attribute keys of the activity lines.
const (
	logOrigin       = "origin"
	logAgent        = "agent"
	logOutcome      = "outcome"
	logCode         = "code"
	logDuration     = "duration"
	logRounds       = "rounds"
	logInputs       = "inputs"
	logInputTokens  = "input_tokens"
	logOutputTokens = "output_tokens"
	logCacheRead    = "cache_read_input_tokens"
	logCacheWrite   = "cache_creation_input_tokens"
	logUnknown      = "unknown_outcome"
	logReason       = "reason"
)

// notOffered is the tool label of calls to tools the turn did not offer,
// so a model inventing names cannot grow the metric's series.
const notOffered = "(not offered)"

// telemetry is brain's metrics and activity log: the engine's Observer,
// the wrapper of every model, and the delivery observer of the bridges.
type telemetry struct {
	log      *slog.Logger
	turns    *metrics.Counter
	turnDur  *metrics.Histogram
	toolDur  *metrics.Histogram
	modelDur *metrics.Histogram
	tokens   *metrics.Counter
	cost     *metrics.Counter
	delivery *metrics.Histogram
}

var _ engine.Observer = (*telemetry)(nil)

func newTelemetry(reg *metrics.Registry, log *slog.Logger) *telemetry {
	b := metrics.DurationBuckets
	return &telemetry{
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

func (t *telemetry) TurnStarted(ti engine.TurnInfo) {
	t.log.Info("turn started", logSession, ti.SessionID, tools.LogTurn, ti.TurnID,
		logOrigin, ti.Origin, logAgent, ti.Agent, logInputs, ti.Inputs)
}

func (t *telemetry) TurnEnded(ti engine.TurnInfo, end engine.TurnEnd) {
	t.turns.Inc(string(end.Outcome))
	t.turnDur.Observe(end.Duration.Seconds(), string(end.Outcome))
	attrs := []any{logSession, ti.SessionID, tools.LogTurn, ti.TurnID, logOrigin, ti.Origin, logOutcome, end.Outcome,
		logDuration, end.Duration.Round(time.Millisecond).String(), logRounds, end.Rounds,
		logInputTokens, end.Usage.InputTokens, logOutputTokens, end.Usage.OutputTokens,
		logCacheRead, end.Usage.CacheReadTokens, logCacheWrite, end.Usage.CacheWriteTokens}
	if end.Outcome == engine.OutcomeFailed {
		t.log.Warn("turn failed", append(attrs, logCode, end.Code)...)
		return
	}
	t.log.Info("turn ended", attrs...)
}

func (t *telemetry) ToolReturned(ti engine.TurnInfo, r engine.ToolReturn) {
	name := r.Tool
	if !r.Offered {
		name = notOffered
	}
	t.toolDur.Observe(r.Duration.Seconds(), name, okOrError(r.IsError))
	if r.IsError {
		t.log.Warn("tool call failed", logSession, ti.SessionID, tools.LogTurn, ti.TurnID, tools.LogTool, r.Tool,
			logUnknown, r.Unknown, logDuration, r.Duration.Round(time.Millisecond).String(), logReason, clip(r.Text, 300))
	}
}

// observeModel wraps m so its calls are timed and its tokens counted
// (and priced, when price is set) under the model's name.
func (t *telemetry) observeModel(name string, price *config.PriceConfig, m engine.Model) engine.Model {
	return observedModel{t: t, name: name, price: price, next: m}
}

type observedModel struct {
	t     *telemetry
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

// observeDelivery returns the bridges' delivery observer for platform.
func (t *telemetry) observeDelivery(platform string) func(time.Duration, error) {
	return func(d time.Duration, err error) {
		t.delivery.Observe(d.Seconds(), platform, okOrError(err != nil))
	}
}

// inboxSources are the inbox sources of the configured bridges.
func inboxSources(cfg *config.Config) []string {
	var out []string
	if cfg.Slack != nil {
		out = append(out, slackbridge.InboxSource)
	}
	if cfg.Linear != nil {
		out = append(out, linearbridge.InboxSource)
	}
	return out
}

// registerInbox exports the inbox backlog per source: depth and the age
// of the oldest pending item (0 when none), each configured source always
// present.
func registerInbox(reg *metrics.Registry, store durable.Health, sources []string, clock func() time.Time, log *slog.Logger) {
	read := func() []durable.InboxBacklog {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		got, err := store.InboxBacklogs(ctx)
		if err != nil {
			log.Warn("read inbox backlog for metrics", logErr, err)
		}
		out := make([]durable.InboxBacklog, 0, len(sources))
		for _, src := range sources {
			b := durable.InboxBacklog{Source: src}
			for _, g := range got {
				if g.Source == src {
					b = g
				}
			}
			out = append(out, b)
		}
		return out
	}
	reg.GaugeFunc("brain_inbox_depth", "Inbound platform events recorded and not yet worked, by source.", []string{"source"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, b := range read() {
			out = append(out, metrics.Sample{Labels: []string{b.Source}, Value: float64(b.Depth)})
		}
		return out
	})
	reg.GaugeFunc("brain_inbox_oldest_age_seconds", "Age of the oldest pending inbound event, by source.", []string{"source"}, func() []metrics.Sample {
		var out []metrics.Sample
		now := clock()
		for _, b := range read() {
			age := 0.0
			if !b.Oldest.IsZero() {
				age = max(0, now.Sub(b.Oldest).Seconds())
			}
			out = append(out, metrics.Sample{Labels: []string{b.Source}, Value: age})
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
