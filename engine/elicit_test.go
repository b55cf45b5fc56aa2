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

// seatTool asks which seat (a multi round-trip request) and books it once
// the answer comes back; it records every call it gets.
type seatTool struct {
	mu      sync.Mutex
	resumes []*tools.Resume
}

func (s *seatTool) def() tools.Definition {
	return tools.Definition{
		Name: "travel__book", Description: "Book a seat",
		Input: json.RawMessage(`{"type":"object","properties":{"flight":{"type":"string"}}}`),
		Run: func(_ context.Context, call tools.Call) (json.RawMessage, error) {
			s.mu.Lock()
			s.resumes = append(s.resumes, call.Resume)
			s.mu.Unlock()
			if call.Resume == nil {
				return nil, &tools.InputRequired{State: json.RawMessage(`"state-1"`), Elicitation: tools.Elicitation{
					Message: "Which seat?",
					Fields:  []tools.Field{{Name: "seat", Type: "string", Choices: []tools.Choice{{Value: "aisle"}, {Value: "window", Label: "Window"}}}},
				}}
			}
			out, _ := json.Marshal(map[string]any{"action": call.Resume.Reply.Action, "content": call.Resume.Reply.Content, "reason": call.Resume.Reply.Reason})
			return out, nil
		},
	}
}

func (s *seatTool) calls() []*tools.Resume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*tools.Resume(nil), s.resumes...)
}

// A tool's request for input becomes the session's question; the answer,
// given after the engine restarted, sends the call again once with the
// reply and the stored state, and the model reads the result.
func TestEngine_ElicitationAnsweredAfterRestart(t *testing.T) {
	seat := &seatTool{}
	opts := []harnessOption{withTools(seat.def())}
	h := newHarness(t, opts...)
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "travel__book", Input: `{"flight":"AF1"}`}), fakemodel.Text("Booked."))
	s := h.session()
	h.send(s.ID, "book AF1")
	s, evs := h.waitTurns(s.ID, 1)
	if s.Status != engine.StatusAwaitingInput || outcome(t, evs) != engine.OutcomeQuestion {
		t.Fatalf("status %s outcome %s\n%s", s.Status, outcome(t, evs), dump(evs))
	}
	q := s.OpenQuestion()
	if q == nil || q.Call == nil || !strings.Contains(q.Text, "Which seat?") {
		t.Fatalf("question %+v", q)
	}
	var values []string
	for _, o := range q.Options {
		values = append(values, o.Value)
	}
	if strings.Join(values, ",") != "v:aisle,v:window,elicit:decline,elicit:cancel" {
		t.Fatalf("options %v", values)
	}

	h.close()
	h.open(opts...)
	defer h.close()

	ev, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "window", Author: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	if in := payload[engine.Input](t, ev); in.Answer == nil || in.Answer.Call == nil || in.Answer.Value != "v:window" {
		t.Fatalf("recorded answer %+v", in.Answer)
	}
	s, evs = h.waitTurns(s.ID, 2)
	if s.Status != engine.StatusIdle {
		t.Fatalf("status %s\n%s", s.Status, dump(evs))
	}
	calls := seat.calls()
	if len(calls) != 2 || calls[1] == nil || string(calls[1].State) != `"state-1"` ||
		calls[1].Reply.Action != tools.ActionAccept || calls[1].Reply.Content["seat"] != "window" {
		t.Fatalf("tool calls %+v", calls)
	}
	if n := count(evs, engine.EventToolCall); n != 2 {
		t.Fatalf("tool.call events %d, want 2 (the model's and the re-sent one)\n%s", n, dump(evs))
	}
	req := string(h.fake.Requests()[1].Raw)
	if !strings.Contains(req, `\"seat\":\"window\"`) {
		t.Fatalf("the model did not get the re-sent call's result: %s", req)
	}
}

// Decline is an answer: the call is sent again with it.
func TestEngine_ElicitationDeclined(t *testing.T) {
	seat := &seatTool{}
	h := newHarness(t, withTools(seat.def()))
	defer h.close()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "travel__book", Input: `{}`}), fakemodel.Text("OK, not booked."))
	s := h.session()
	h.send(s.ID, "book")
	s, _ = h.waitTurns(s.ID, 1)
	q := s.OpenQuestion()
	if _, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "Decline", Answer: &engine.Answer{QuestionID: q.ID, Value: "elicit:decline"}}); err != nil {
		t.Fatal(err)
	}
	h.waitTurns(s.ID, 2)
	calls := seat.calls()
	if len(calls) != 2 || calls[1].Reply.Action != tools.ActionDecline || calls[1].Reply.Content != nil {
		t.Fatalf("tool calls %+v", calls)
	}
}

// A client cannot smuggle a pending call into an answer.
func TestEngine_AnswerCannotCarryACall(t *testing.T) {
	h := newHarness(t, withAsk())
	defer h.close()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: envQuestion}), fakemodel.Text("ok"))
	s := h.session()
	h.send(s.ID, "deploy")
	s, _ = h.waitTurns(s.ID, 1)
	ev, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "x", Answer: &engine.Answer{
		QuestionID: s.OpenQuestion().ID, Value: "prod", Call: &engine.PendingCall{Tool: "evil", Input: json.RawMessage(`{}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if in := payload[engine.Input](t, ev); in.Answer.Call != nil {
		t.Fatalf("a client's call was kept: %+v", in.Answer.Call)
	}
}

// In a session nobody can answer, the request is declined at once with
// the reason, and the turn goes on.
func TestEngine_ElicitationDeclinedWhenNobodyCanAnswer(t *testing.T) {
	seat := &seatTool{}
	h := newHarness(t, withTools(seat.def()))
	defer h.close()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "travel__book", Input: `{}`}), fakemodel.Text("Could not book."))
	s, _, err := h.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Origin: engine.OriginSchedule, StartedBy: "nightly", Interactive: false})
	if err != nil {
		t.Fatal(err)
	}
	h.send(s.ID, "book")
	s, evs := h.waitTurns(s.ID, 1)
	if s.OpenQuestion() != nil || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("outcome %s\n%s", outcome(t, evs), dump(evs))
	}
	calls := seat.calls()
	if len(calls) != 2 || calls[1].Reply.Action != tools.ActionDecline || !strings.Contains(calls[1].Reply.Reason, `schedule "nightly"`) {
		t.Fatalf("tool calls %+v", calls)
	}
	res := results(t, evs)
	if len(res) != 1 || len(res[0].Result.Content) == 0 || !strings.Contains(res[0].Result.Content[0].Text, "declined") {
		t.Fatalf("results %+v", res)
	}
}
