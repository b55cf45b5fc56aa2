package linear

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/enginetest"
	"brain/tools"
)

var _ Events = (*enginetest.Events)(nil)

// TestRenderer_Render maps each event to its activity, with ids derived
// from the session and the event's seq.
func TestRenderer_Render(t *testing.T) {
	c, fake := newClient(t)
	a := engine.Approval{ID: "apr_1", Tool: "deploy", Card: tools.Card{Title: "Deploy api"}, Status: engine.ApprovalPending}
	// The first agent.message is a thought: the renderer looks ahead to
	// see that a tool call follows it.
	evs := &enginetest.Events{}
	evs.SetApproval(a)
	evs.Add(t,
		engine.TurnStarted{},
		engine.AgentMessage{Text: "Let me check."},
		engine.ToolCall{ID: "call_1", Name: "lookup", Input: json.RawMessage(`{"q": "api"}`)},
		engine.ToolProgress{CallID: "call_1", Name: "lookup", Data: json.RawMessage(`{}`)},
		engine.ToolCallResult{CallID: "call_1", Name: "lookup", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: "all\n  green"}}}},
		engine.Question{ID: "q1", Text: "Deploy now?", Options: []engine.Option{{Label: "Yes", Value: "yes"}}},
		engine.ApprovalRequested{ApprovalID: a.ID},
		engine.ApprovalDecided{ApprovalID: a.ID, By: "ann", Decision: engine.DecisionDeny},
		engine.ApplyFailed{ApprovalID: a.ID, Error: "boom"},
		engine.SessionError{Code: "provider_timeout", InputID: "evt_in1", Input: "check the api", Message: "The model timed out."},
		engine.SessionError{Code: engine.CodeInputCancelled, InputID: "evt_in2", Input: "and deploy it", Message: "not run: the session stopped first"},
		engine.AgentMessage{Text: "  "},
		engine.TurnCompleted{Outcome: engine.OutcomeMaxIterations},
		engine.AgentMessage{Text: "Done."},
	)
	r := &Renderer{Engine: evs, Client: c, Log: c.log}
	s := engine.Session{ID: "ses_1", Origin: engine.OriginLinear, ThreadKey: "linear:" + testSession}
	ctx := testCtx(t)
	evs.RenderAfter(t, 0, func(ev engine.Event) error { return r.Render(ctx, s, ev) })
	var got []string
	for _, act := range fake.Activities(testSession) {
		line := act.Type + " " + act.Body
		if act.Type == "action" {
			line = fmt.Sprintf("action %s(%s) = %s", act.Action, act.Parameter, act.Result)
		}
		if act.Ephemeral {
			line += " [ephemeral]"
		}
		got = append(got, line)
		if act.ClientID == "" {
			t.Errorf("activity %q has no client-chosen id", line)
		}
	}
	want := []string{
		"thought Let me check.",
		"thought Still working: lookup… [ephemeral]",
		`action lookup({"q":"api"}) = all green`,
		"elicitation Deploy now?",
		"elicitation " + ApprovalBody(a),
		"thought Denied by ann.",
		"thought Approval apr_1: failed. boom",
		"error provider_timeout: The model timed out.",
		"elicitation The turn stopped before answering. Run the unanswered messages again?",
		"thought Your message “and deploy it” was not run: the session stopped first",
		"response I stopped after the maximum number of tool rounds without a final answer. Send a message to continue.",
		"response Done.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("activities:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if first := fake.Activities(testSession)[0]; first.ClientID != ActivityID("ses_1", "2") {
		t.Errorf("first activity id %q, want ActivityID(session, seq)", first.ClientID)
	}
}

func TestClipText(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"héllo wörld", 5, "héllo…"},
	} {
		if got := clipText(tt.in, tt.n); got != tt.want {
			t.Errorf("clipText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestRenderer_CallInputOutlivesADelivery: a call's input is shown with its
// result even when the result is rendered in a later delivery.
func TestRenderer_CallInputOutlivesADelivery(t *testing.T) {
	c, fake := newClient(t)
	evs := &enginetest.Events{}
	r := &Renderer{Engine: evs, Client: c, Log: c.log}
	s := engine.Session{ID: "ses_1", Origin: engine.OriginLinear, ThreadKey: "linear:" + testSession}
	ctx := testCtx(t)
	render := func(ev engine.Event) error { return r.Render(ctx, s, ev) }
	evs.Add(t, engine.ToolCall{ID: "call_1", Name: "lookup", Input: json.RawMessage(`{"q":"api"}`)})
	last := evs.RenderAfter(t, 0, render)
	evs.Add(t, engine.ToolCallResult{CallID: "call_1", Name: "lookup", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: "green"}}}})
	evs.RenderAfter(t, last, render)
	acts := fake.Activities(testSession)
	if len(acts) != 1 || acts[0].Type != "action" || acts[0].Parameter != `{"q":"api"}` {
		t.Fatalf("activities %+v, want one action with the call's input", acts)
	}
	if len(r.calls) != 0 {
		t.Fatalf("calls %v still held after the result", r.calls)
	}
}
