package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

// recordCalls is a tool that keeps the call context of every call.
func recordCalls(name string, mu *sync.Mutex, calls *[]tools.Call) tools.Definition {
	return tools.Definition{
		Name: name, Description: "Write something downstream",
		Run: func(_ context.Context, c tools.Call) (json.RawMessage, error) {
			mu.Lock()
			*calls = append(*calls, c)
			mu.Unlock()
			return json.RawMessage(`{"ok":true}`), nil
		},
	}
}

// A provider that reuses a call id must not make two writes share one
// idempotency key; the model still sees its own id on both sides.
func TestEngine_ReusedProviderCallIDsGetTheirOwnKeys(t *testing.T) {
	var mu sync.Mutex
	var calls []tools.Call
	h := newHarness(t, withTools(recordCalls("write", &mu, &calls)))
	h.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{ID: "call_0", Name: "write", Input: `{"n":1}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "call_0", Name: "write", Input: `{"n":2}`}),
		fakemodel.Text("wrote twice"),
	)
	s := h.session()
	h.send(s.ID, "write two things")
	_, evs := h.waitTurns(s.ID, 1)

	if len(calls) != 2 {
		t.Fatalf("tool ran %d times", len(calls))
	}
	if calls[0].IdempotencyKey() == calls[1].IdempotencyKey() {
		t.Fatalf("two writes share the idempotency key %q", calls[0].IdempotencyKey())
	}
	for _, c := range calls {
		if c.ToolCallID == "call_0" || !strings.HasPrefix(c.IdempotencyKey(), s.ID+":") {
			t.Errorf("call context uses the provider's id: %+v", c)
		}
	}
	recorded := ofType(evs, engine.EventToolCall)
	for i, ev := range recorded {
		if c := payload[engine.ToolCall](t, ev); c.ID != calls[i].ToolCallID || c.ProviderID != "call_0" {
			t.Errorf("tool.call %d: %s", i, ev.Data)
		}
	}
	// The model pairs each result with its own id.
	reqs := h.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests", len(reqs))
	}
	last := string(reqs[2].Raw)
	if strings.Count(last, `"id":"call_0"`) != 2 || strings.Count(last, `"tool_use_id":"call_0"`) != 2 {
		t.Fatalf("the model's context lost its call ids: %s", last)
	}
	if strings.Contains(last, calls[0].ToolCallID) {
		t.Fatalf("brain's call id reached the model: %s", last)
	}
}

// The call context names the message that holds the call, the model and
// the API request that sent the input.
func TestEngine_CallContextNamesMessageModelAndRequest(t *testing.T) {
	var mu sync.Mutex
	var calls []tools.Call
	h := newHarness(t, withTools(recordCalls("write", &mu, &calls)))
	h.fake.Push(
		fakemodel.TextAndTools("Writing.", fakemodel.Call{ID: "toolu_a", Name: "write"}, fakemodel.Call{ID: "toolu_b", Name: "write"}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_c", Name: "write"}),
		fakemodel.Text("done"),
	)
	s := h.session()
	if _, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "write", RequestID: "req-42"}); err != nil {
		t.Fatal(err)
	}
	_, evs := h.waitTurns(s.ID, 1)
	if len(calls) != 3 {
		t.Fatalf("tool ran %d times", len(calls))
	}
	text := ofType(evs, engine.EventAgentMessage)[0]
	second := ofType(evs, engine.EventToolCall)[2]
	for i, want := range []string{text.ID, text.ID, second.ID} {
		c := calls[i]
		if c.MessageID != want || c.Model != "fake" || c.RequestID != "req-42" || c.Agent != "default" {
			t.Errorf("call %d context: message %q model %q request %q agent %q; want message %q, model fake, request req-42",
				i, c.MessageID, c.Model, c.RequestID, c.Agent, want)
		}
	}
}
