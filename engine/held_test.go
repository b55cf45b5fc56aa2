package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

// confirmTool asks, while its call waits (MCP 2025-11-25), whether to go
// on, and returns the reply it got.
type confirmTool struct {
	mu      sync.Mutex
	replies []tools.Reply
	errs    []error
}

func (c *confirmTool) def() tools.Definition {
	return tools.Definition{
		Name: "db__drop", Description: "Drop a table",
		Input: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
			if call.Elicit == nil {
				return nil, tools.Failed("no Elicit")
			}
			r, err := call.Elicit(ctx, tools.Elicitation{Message: "Really drop users?", Fields: []tools.Field{{Name: "confirm", Type: "boolean"}}})
			c.mu.Lock()
			c.replies, c.errs = append(c.replies, r), append(c.errs, err)
			c.mu.Unlock()
			if err != nil {
				<-ctx.Done() // the engine stops the call
				return nil, tools.Unknown("cancelled waiting for the server")
			}
			out, _ := json.Marshal(r)
			return out, nil
		},
	}
}

func (c *confirmTool) got() ([]tools.Reply, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tools.Reply(nil), c.replies...), append([]error(nil), c.errs...)
}

func heldOpen(s engine.Session, _ []engine.Event) bool {
	q := s.OpenQuestion()
	return q != nil && q.Call != nil && q.Call.Held
}

// A request made while the call waits is shown as the session's
// question during the turn; the answer goes back to the call, which
// completes, and starts no turn of its own.
func TestEngine_HeldElicitationAnswered(t *testing.T) {
	ct := &confirmTool{}
	h := newHarness(t, withTools(ct.def()))
	defer h.close()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "db__drop", Input: `{}`}), fakemodel.Text("Dropped."), fakemodel.Text("Nothing else."))
	s := h.session()
	h.send(s.ID, "drop users")
	s, _ = h.waitFor(s.ID, "held question", heldOpen)
	q := s.OpenQuestion()
	if s.Status != engine.StatusRunning || !strings.Contains(q.Text, "db__drop asks: Really drop users?") || len(q.Options) != 4 {
		t.Fatalf("status %s question %+v", s.Status, q)
	}
	// The session's person answers by button.
	if _, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "Yes", Author: "tester", Answer: &engine.Answer{QuestionID: q.ID, Value: "true"}}); err != nil {
		t.Fatal(err)
	}
	s, evs := h.waitTurns(s.ID, 1)
	if s.Status != engine.StatusIdle || s.OpenQuestion() != nil || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("status %s outcome %s\n%s", s.Status, outcome(t, evs), dump(evs))
	}
	replies, _ := ct.got()
	if len(replies) != 1 || replies[0].Action != tools.ActionAccept || replies[0].Content["confirm"] != true {
		t.Fatalf("replies %+v", replies)
	}
	res := results(t, evs)
	if len(res) != 1 || res[0].Result.IsError {
		t.Fatalf("results %+v", res)
	}
	// The next message starts a turn with that message only.
	next := h.send(s.ID, "anything else?")
	_, evs = h.waitTurns(s.ID, 2)
	started := ofType(evs, engine.EventTurnStarted)
	if ids := payload[engine.TurnStarted](t, started[1]).InputIDs; len(ids) != 1 || ids[0] != next.ID {
		t.Fatalf("second turn took %v, want only %s", ids, next.ID)
	}
}

// brain stopping while the question is open ends the call as an unknown
// outcome and tells the person, naming the tool.
func TestEngine_HeldElicitationRestart(t *testing.T) {
	ct := &confirmTool{}
	h := newHarness(t, withTools(ct.def()))
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "db__drop", Input: `{}`}))
	s := h.session()
	h.send(s.ID, "drop users")
	h.waitFor(s.ID, "held question", heldOpen)

	h.crash(func() {}, withTools(ct.def()))
	defer h.close()

	s, evs := h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })
	if s.OpenQuestion() != nil {
		t.Fatalf("question still open: %+v", s.OpenQuestion())
	}
	rs := results(t, evs)
	if len(rs) != 1 || !rs[0].Result.UnknownOutcome || !strings.Contains(rs[0].Result.Text(), "db__drop waited for the person's input") {
		t.Fatalf("recovered result %+v", rs)
	}
	errs := ofType(evs, engine.EventSessionError)
	if len(errs) != 1 {
		t.Fatalf("session.error:\n%s", dump(evs))
	}
	if m := payload[engine.SessionError](t, errs[0]).Message; !strings.Contains(m, "db__drop was waiting for your answer") || !strings.Contains(m, "unknown") {
		t.Fatalf("message %q", m)
	}
}

// A question nobody answers within elicitation_timeout is closed, the
// person is told, and the call ends as an unknown outcome.
func TestEngine_HeldElicitationUnanswered(t *testing.T) {
	ct := &confirmTool{}
	short := func(c *engine.Config, _ *engine.Agent) { c.ElicitationTimeout = 20 * time.Millisecond }
	h := newHarness(t, withTools(ct.def()), short)
	defer h.close()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "db__drop", Input: `{}`}), fakemodel.Text("It may or may not have run."))
	s := h.session()
	h.send(s.ID, "drop users")
	s, evs := h.waitTurns(s.ID, 1)
	if s.OpenQuestion() != nil || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("outcome %s\n%s", outcome(t, evs), dump(evs))
	}
	rs := results(t, evs)
	if len(rs) != 1 || !rs[0].Result.UnknownOutcome || !strings.Contains(rs[0].Result.Text(), "no answer came within 20ms") {
		t.Fatalf("result %+v", rs)
	}
	errs := ofType(evs, engine.EventSessionError)
	if len(errs) != 1 || payload[engine.SessionError](t, errs[0]).Code != engine.CodeElicitationUnanswered {
		t.Fatalf("session.error:\n%s", dump(evs))
	}
}

// In a session nobody can answer, the request is declined with the reason.
func TestEngine_HeldElicitationDeclinedWhenNobodyCanAnswer(t *testing.T) {
	ct := &confirmTool{}
	h := newHarness(t, withTools(ct.def()))
	defer h.close()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "db__drop", Input: `{}`}), fakemodel.Text("Not dropped."))
	s, _, err := h.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Origin: engine.OriginSchedule, StartedBy: "nightly", Interactive: false})
	if err != nil {
		t.Fatal(err)
	}
	h.send(s.ID, "drop users")
	h.waitTurns(s.ID, 1)
	replies, _ := ct.got()
	if len(replies) != 1 || replies[0].Action != tools.ActionDecline || !strings.Contains(replies[0].Reason, `schedule "nightly"`) {
		t.Fatalf("replies %+v", replies)
	}
}
