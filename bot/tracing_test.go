package bot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"brain/bot/config"
	"brain/bot/telemetry"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

// waitSpan waits until the exporter holds a span named name.
func waitSpan(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		spans := exp.GetSpans()
		for _, s := range spans {
			if s.Name == name {
				return spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %q in %v", name, spanNames(spans))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestTracing_TurnModelAndToolSpans(t *testing.T) {
	const prompt, output, answer = "PROMPT-find-the-thing", "OUTPUT-the-thing-is-here", "ANSWER-found-it"
	exp := tracetest.NewInMemoryExporter()
	lookup := tools.Definition{
		Name: "lookup", Description: "Look something up",
		Input: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"found":"` + output + `"}`), nil
		},
	}
	ta := newTestApp(t, "    tools: [lookup]\n", Options{Tools: []tools.Definition{lookup}, SpanExporter: exp})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_1", Name: "lookup", Input: `{"q":"` + prompt + `"}`}, fakemodel.Call{Name: "invented", Input: `{}`}),
		fakemodel.Text(answer),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, prompt)
	ta.waitTurns(s.ID, 1)
	spans := waitSpan(t, exp, "invoke_agent default")

	byName := map[string][]tracetest.SpanStub{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
	}
	if len(byName["invoke_agent default"]) != 1 || len(byName["chat claude-test"]) != 2 ||
		len(byName["execute_tool lookup"]) != 1 || len(byName["execute_tool (not offered)"]) != 1 || len(spans) != 5 {
		t.Fatalf("spans %v, want one turn, two model calls, two tool calls", spanNames(spans))
	}
	turn := byName["invoke_agent default"][0]
	ta0 := attrs(turn)
	if ta0["gen_ai.operation.name"].AsString() != "invoke_agent" || ta0["gen_ai.conversation.id"].AsString() != s.ID ||
		ta0["gen_ai.agent.name"].AsString() != "default" || ta0["brain.turn.outcome"].AsString() != "completed" ||
		ta0["gen_ai.usage.input_tokens"].AsInt64() <= 0 || turn.Parent.IsValid() || turn.Status.Code == codes.Error {
		t.Fatalf("turn span %+v attrs %v", turn, ta0)
	}
	var in, out int64
	for _, c := range byName["chat claude-test"] {
		a := attrs(c)
		if c.Parent.SpanID() != turn.SpanContext.SpanID() || c.SpanContext.TraceID() != turn.SpanContext.TraceID() {
			t.Fatalf("model span %s is not a child of the turn's", c.Name)
		}
		if a["gen_ai.operation.name"].AsString() != "chat" || a["gen_ai.request.model"].AsString() != "claude-test" ||
			a["gen_ai.conversation.id"].AsString() != s.ID || a["gen_ai.provider.name"].AsString() != "anthropic" ||
			a["gen_ai.usage.input_tokens"].AsInt64() <= 0 || a["gen_ai.usage.output_tokens"].AsInt64() <= 0 {
			t.Fatalf("model span attrs %v", a)
		}
		in += a["gen_ai.usage.input_tokens"].AsInt64()
		out += a["gen_ai.usage.output_tokens"].AsInt64()
	}
	if in != ta0["gen_ai.usage.input_tokens"].AsInt64() || out != ta0["gen_ai.usage.output_tokens"].AsInt64() {
		t.Fatalf("model spans count %d/%d tokens, the turn %v", in, out, ta0)
	}
	tool := byName["execute_tool lookup"][0]
	a := attrs(tool)
	if tool.Parent.SpanID() != turn.SpanContext.SpanID() || a["gen_ai.tool.name"].AsString() != "lookup" ||
		a["gen_ai.operation.name"].AsString() != "execute_tool" || a["gen_ai.tool.call.id"].AsString() == "" ||
		tool.Status.Code == codes.Error || tool.StartTime.After(tool.EndTime) {
		t.Fatalf("tool span %+v attrs %v", tool, a)
	}
	if bad := byName["execute_tool (not offered)"][0]; bad.Status.Code != codes.Error || bad.Parent.SpanID() != turn.SpanContext.SpanID() {
		t.Fatalf("not-offered tool span status %+v", bad.Status)
	}

	// Nothing the conversation said, nor a secret, is in a span.
	for _, sp := range spans {
		text := sp.Name + " " + sp.Status.Description
		for _, kv := range sp.Attributes {
			text += " " + kv.Value.String()
		}
		for _, ev := range sp.Events {
			text += " " + ev.Name
			for _, kv := range ev.Attributes {
				text += " " + kv.Value.String()
			}
		}
		for _, never := range []string{prompt, output, answer, "test-model-key", "You are a test agent"} {
			if strings.Contains(text, never) {
				t.Fatalf("span %s holds %q: %s", sp.Name, never, text)
			}
		}
	}
}

func TestTracing_OffUnlessAnEndpointIsSet(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	cfg := &config.Config{Telemetry: config.TelemetryConfig{ServiceName: "brain"}}
	if tr, err := telemetry.NewTracing(context.Background(), cfg, nil); tr != nil || err != nil {
		t.Fatalf("tracing %v, %v with no endpoint", tr, err)
	}
	for _, set := range []func(){
		func() { cfg.Telemetry.OTLPEndpoint = "http://127.0.0.1:4318/v1/traces" },
		func() { t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces") },
	} {
		cfg.Telemetry.OTLPEndpoint = ""
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
		set()
		tr, err := telemetry.NewTracing(context.Background(), cfg, nil)
		if err != nil || tr == nil {
			t.Fatalf("tracing %v, %v with an endpoint", tr, err)
		}
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
