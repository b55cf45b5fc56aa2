package telemetry

import (
	"context"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"brain/bot/config"
	"brain/engine"
)

// GenAI semantic-convention attribute keys of the spans, and brain's own.
const (
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrProvider     = attribute.Key("gen_ai.provider.name")
	attrConversation = attribute.Key("gen_ai.conversation.id")
	attrAgent        = attribute.Key("gen_ai.agent.name")
	attrReqModel     = attribute.Key("gen_ai.request.model")
	attrRespModel    = attribute.Key("gen_ai.response.model")
	attrFinish       = attribute.Key("gen_ai.response.finish_reasons")
	attrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	attrToolName     = attribute.Key("gen_ai.tool.name")
	attrToolCallID   = attribute.Key("gen_ai.tool.call.id")
	attrErrorType    = attribute.Key("error.type")
	attrTurn         = attribute.Key("brain.turn.id")
	attrOrigin       = attribute.Key("brain.origin")
	attrOutcome      = attribute.Key("brain.turn.outcome")
	attrRounds       = attribute.Key("brain.turn.rounds")
	attrUnknown      = attribute.Key("brain.tool.unknown_outcome")
	attrMCPMethod    = attribute.Key("mcp.method.name")
	attrMCPProtocol  = attribute.Key("mcp.protocol.version")
	attrMCPServer    = attribute.Key("brain.mcp.server")
)

// The operation names, which also begin the span names.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
)

// Tracing makes OpenTelemetry spans of turns, model calls and tool calls:
// it is an engine Observer (turn and tool spans) and wraps the models
// (model call spans, children of their turn's span). The spans carry
// names, ids, models and token counts, never prompts, outputs or tool
// results: those may hold anything, secrets included.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer

	mu    sync.Mutex
	turns map[string]trace.Span // running turns' spans by turn id
	mcp   MCPDescriber
}

// MCPDescriber says, for a tool an MCP server offers, the server's id,
// the MCP method a call sends and the protocol revision it speaks; ok is
// false for any other tool.
type MCPDescriber func(tool string) (server, method, protocol string, ok bool)

// DescribeMCP makes the spans of MCP tool calls carry the server, method
// and protocol revision. Call it before the engine starts.
func (t *Tracing) DescribeMCP(d MCPDescriber) { t.mcp = d }

var _ engine.Observer = (*Tracing)(nil)

// TracingEnabled reports whether traces are exported: the config names an
// endpoint or the standard OTLP variables do.
func TracingEnabled(cfg *config.Config) bool {
	return cfg.Telemetry.OTLPEndpoint != "" ||
		os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
		os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewTracing builds the tracer provider, or returns nil when tracing is
// off. An injected exporter (tests) is sent every span as it ends;
// otherwise spans go in batches over OTLP/HTTP.
func NewTracing(ctx context.Context, cfg *config.Config, exp sdktrace.SpanExporter) (*Tracing, error) {
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", cfg.Telemetry.ServiceName))),
	}
	switch {
	case exp != nil:
		opts = append(opts, sdktrace.WithSyncer(exp))
	case TracingEnabled(cfg):
		var httpOpts []otlptracehttp.Option
		if cfg.Telemetry.OTLPEndpoint != "" {
			httpOpts = append(httpOpts, otlptracehttp.WithEndpointURL(cfg.Telemetry.OTLPEndpoint))
		}
		e, err := otlptracehttp.New(ctx, httpOpts...) // connects lazily
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(e))
	default:
		return nil, nil
	}
	p := sdktrace.NewTracerProvider(opts...)
	return &Tracing{provider: p, tracer: p.Tracer("brain"), turns: map[string]trace.Span{}}, nil
}

// Shutdown flushes the spans not yet exported, within ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// turnContext is ctx carrying the span of turn id, when it runs.
func (t *Tracing) turnContext(ctx context.Context, turnID string) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.turns[turnID]; ok {
		return trace.ContextWithSpan(ctx, s)
	}
	return ctx
}

func (t *Tracing) TurnStarted(ti engine.TurnInfo) {
	_, span := t.tracer.Start(context.Background(), opInvokeAgent+" "+ti.Agent,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attrOperation.String(opInvokeAgent),
			attrConversation.String(ti.SessionID),
			attrAgent.String(ti.Agent),
			attrTurn.String(ti.TurnID),
			attrOrigin.String(string(ti.Origin)),
		))
	t.mu.Lock()
	t.turns[ti.TurnID] = span
	t.mu.Unlock()
}

func (t *Tracing) TurnEnded(ti engine.TurnInfo, end engine.TurnEnd) {
	t.mu.Lock()
	span, ok := t.turns[ti.TurnID]
	delete(t.turns, ti.TurnID)
	t.mu.Unlock()
	if !ok {
		return
	}
	span.SetAttributes(
		attrOutcome.String(string(end.Outcome)),
		attrRounds.Int(end.Rounds),
		attrInputTokens.Int64(end.Usage.InputTokens),
		attrOutputTokens.Int64(end.Usage.OutputTokens),
	)
	if end.Outcome == engine.OutcomeFailed {
		span.SetAttributes(attrErrorType.String(end.Code))
		span.SetStatus(codes.Error, end.Code) // a session.error code, not a message
	}
	span.End()
}

// ToolReturned records the call's span after the fact: the engine reports
// a call once it returned, with how long it took.
func (t *Tracing) ToolReturned(ti engine.TurnInfo, r engine.ToolReturn) {
	name := r.Tool
	if !r.Offered {
		name = notOffered // a model's invention is not a span name
	}
	end := time.Now()
	ctx := t.turnContext(context.Background(), ti.TurnID)
	_, span := t.tracer.Start(ctx, opExecuteTool+" "+name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(end.Add(-r.Duration)),
		trace.WithAttributes(
			attrOperation.String(opExecuteTool),
			attrConversation.String(ti.SessionID),
			attrToolName.String(name),
			attrToolCallID.String(r.CallID),
		))
	if t.mcp != nil && r.Offered {
		if server, method, protocol, ok := t.mcp(r.Tool); ok {
			span.SetAttributes(attrMCPServer.String(server), attrMCPMethod.String(method), attrMCPProtocol.String(protocol))
		}
	}
	if r.IsError {
		// r.Text is the reason the model is told: it may quote anything.
		span.SetAttributes(attrErrorType.String("tool_error"), attrUnknown.Bool(r.Unknown))
		span.SetStatus(codes.Error, "tool call failed")
	}
	span.End(trace.WithTimestamp(end))
}

// TraceModel wraps m so each call is a span under its turn's.
func (t *Tracing) TraceModel(provider, model string, m engine.Model) engine.Model {
	return tracedModel{t: t, provider: provider, model: model, next: m}
}

type tracedModel struct {
	t        *Tracing
	provider string
	model    string
	next     engine.Model
}

func (m tracedModel) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	sctx, span := m.t.tracer.Start(m.t.turnContext(ctx, req.TurnID), opChat+" "+m.model,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attrOperation.String(opChat),
			attrProvider.String(m.provider),
			attrConversation.String(req.SessionID),
			attrReqModel.String(m.model),
		))
	defer span.End()
	resp, err := m.next.Generate(sctx, req)
	if err != nil {
		// Provider errors may echo the request: only their kind is kept.
		span.SetAttributes(attrErrorType.String("model_error"))
		span.SetStatus(codes.Error, "model call failed")
		return resp, err
	}
	span.SetAttributes(
		attrInputTokens.Int64(resp.Usage.InputTokens),
		attrOutputTokens.Int64(resp.Usage.OutputTokens),
	)
	if resp.Model != "" {
		span.SetAttributes(attrRespModel.String(resp.Model))
	}
	if resp.StopReason != "" {
		span.SetAttributes(attrFinish.StringSlice([]string{resp.StopReason}))
	}
	return resp, nil
}

// Observers fans the engine's one Observer out to several.
type Observers []engine.Observer

func (o Observers) TurnStarted(ti engine.TurnInfo) {
	for _, x := range o {
		x.TurnStarted(ti)
	}
}

func (o Observers) TurnEnded(ti engine.TurnInfo, end engine.TurnEnd) {
	for _, x := range o {
		x.TurnEnded(ti, end)
	}
}

func (o Observers) ToolReturned(ti engine.TurnInfo, r engine.ToolReturn) {
	for _, x := range o {
		x.ToolReturned(ti, r)
	}
}
