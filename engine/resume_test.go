package engine_test

import (
	"context"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// inputsOf decodes the session's user.message events.
func inputsOf(t *testing.T, evs []engine.Event) []engine.Input {
	t.Helper()
	var out []engine.Input
	for _, ev := range ofType(evs, engine.EventUserMessage) {
		out = append(out, payload[engine.Input](t, ev))
	}
	return out
}

func sessionErrors(t *testing.T, evs []engine.Event) []engine.SessionError {
	t.Helper()
	var out []engine.SessionError
	for _, ev := range ofType(evs, engine.EventSessionError) {
		out = append(out, payload[engine.SessionError](t, ev))
	}
	return out
}

// A provider failure with input queued behind the turn: resume with retry
// runs both inputs again, once, in order; the broken turn stays out of
// the context.
func TestEngine_ResumeWithRetryRunsUnansweredInputOnce(t *testing.T) {
	h := newHarness(t)
	block := make(chan struct{})
	h.fake.Push(fakemodel.Block(block), fakemodel.Fail(503, "overloaded"))
	s := h.session()
	first := h.send(s.ID, "first")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	second := h.send(s.ID, "second")
	close(block)
	_, evs := h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })
	errs := sessionErrors(t, evs)
	if len(errs) != 2 || errs[1].InputID != second.ID || errs[1].Code != engine.CodeInputCancelled ||
		!strings.Contains(errs[1].Message, "not run") || !strings.Contains(errs[1].Message, "resume with retry") {
		t.Fatalf("session errors %+v", errs)
	}

	h.fake.Push(fakemodel.Text("both answered"))
	r, err := h.eng.ResumeWith(context.Background(), s.ID, engine.ResumeOptions{Retry: true, RequestID: "req-7"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Retried) != 2 {
		t.Fatalf("retried %d inputs", len(r.Retried))
	}
	for i, orig := range []engine.Event{first, second} {
		in := payload[engine.Input](t, r.Retried[i])
		want := payload[engine.Input](t, orig)
		if r.Retried[i].ID == orig.ID || in.RetryOf != orig.ID || in.Text != want.Text || in.RequestID != "req-7" {
			t.Errorf("retried input %d: %s, want a new event retrying %s", i, r.Retried[i].Data, orig.ID)
		}
	}
	s, evs = h.waitTurns(s.ID, 2)
	if s.Status != engine.StatusIdle || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("after retry: %s %s", s.Status, outcome(t, evs))
	}
	started := payload[engine.TurnStarted](t, ofType(evs, engine.EventTurnStarted)[1])
	if len(started.InputIDs) != 2 || started.InputIDs[0] != r.Retried[0].ID || started.InputIDs[1] != r.Retried[1].ID {
		t.Fatalf("the retry turn took %v", started.InputIDs)
	}
	// Each input once: the broken turn's copy left the context.
	reqs := h.fake.Requests()
	req := string(reqs[len(reqs)-1].Raw)
	if strings.Count(req, "first") != 1 || strings.Count(req, "second") != 1 {
		t.Fatalf("request after retry: %s", req)
	}

	// A second retry (or a retried request) queues nothing.
	r, err = h.eng.ResumeWith(context.Background(), s.ID, engine.ResumeOptions{Retry: true})
	if err != nil || len(r.Retried) != 0 {
		t.Fatalf("second retry: %v, retried %d", err, len(r.Retried))
	}
	if _, evs = h.waitTurns(s.ID, 2); count(evs, engine.EventUserMessage) != 4 || count(evs, engine.EventTurnStarted) != 2 {
		t.Fatalf("events after the second retry:\n%s", dump(evs))
	}
}

// Resume with retry, called again for the same stop before the retried
// input ran (a retried request), queues each input only once.
func TestEngine_RetryTwiceBeforeItRuns(t *testing.T) {
	h := newHarness(t)
	h.fake.Push(fakemodel.Fail(401, "bad key"))
	s := h.session()
	h.send(s.ID, "hello")
	h.waitFor(s.ID, "failed", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusFailed })
	block := make(chan struct{})
	defer close(block)
	h.fake.Push(fakemodel.Block(block))
	r1, err := h.eng.ResumeWith(context.Background(), s.ID, engine.ResumeOptions{Retry: true})
	if err != nil || len(r1.Retried) != 1 {
		t.Fatalf("retry: %v %d", err, len(r1.Retried))
	}
	// The retried turn is running: a repeated request is answered.
	r2, err := h.eng.ResumeWith(context.Background(), s.ID, engine.ResumeOptions{Retry: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Retried) != 0 {
		t.Fatalf("the second retry queued %d inputs again", len(r2.Retried))
	}
	evs, _ := h.eng.Events(context.Background(), s.ID, 0, 0)
	if count(evs, engine.EventUserMessage) != 2 {
		t.Fatalf("events:\n%s", dump(evs))
	}
}

// Input queued behind a turn that a crash cut off is reported, not lost:
// after restart it has a session.error saying how to run it, and resume
// with retry runs it.
func TestEngine_CrashReportsQueuedInputAndRetryRunsIt(t *testing.T) {
	h := newHarness(t)
	block := make(chan struct{})
	h.fake.Push(fakemodel.Block(block))
	s := h.session()
	first := h.send(s.ID, "first")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	queued := h.send(s.ID, "queued")

	h.crash(func() { close(block) })
	s, evs := h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })
	errs := sessionErrors(t, evs)
	if len(errs) != 2 || errs[0].InputID != first.ID || errs[0].Code != engine.CodeInterrupted ||
		errs[1].InputID != queued.ID || errs[1].Code != engine.CodeInputCancelled ||
		!strings.Contains(errs[1].Message, "not run") || !strings.Contains(errs[1].Message, "resume with retry") {
		t.Fatalf("session errors %+v", errs)
	}

	h.fake.Push(fakemodel.Text("done"))
	r, err := h.eng.ResumeWith(context.Background(), s.ID, engine.ResumeOptions{Retry: true})
	if err != nil || len(r.Retried) != 2 {
		t.Fatalf("retry: %v, %d retried", err, len(r.Retried))
	}
	s, evs = h.waitTurns(s.ID, 2)
	ins := inputsOf(t, evs)
	if s.Status != engine.StatusIdle || len(ins) != 4 || ins[2].RetryOf != first.ID || ins[3].RetryOf != queued.ID || ins[3].Text != "queued" {
		t.Fatalf("after retry: %s, inputs %+v", s.Status, ins)
	}
}

// Cancel reports the queued input it drops, with or without a running turn.
func TestEngine_CancelReportsDroppedInput(t *testing.T) {
	h := newHarness(t)
	h.fake.Push(fakemodel.Hold())
	s := h.session()
	h.send(s.ID, "slow")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	dropped := h.send(s.ID, "behind it")
	if _, err := h.eng.Cancel(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	_, evs := h.waitTurns(s.ID, 1)
	errs := sessionErrors(t, evs)
	if len(errs) != 1 || errs[0].InputID != dropped.ID || errs[0].Code != engine.CodeInputCancelled || !strings.Contains(errs[0].Message, "cancelled") {
		t.Fatalf("session errors %+v\n%s", errs, dump(evs))
	}
	// The checkpoint is the cancelled turn's end, after the errors.
	s, _ = h.eng.Session(context.Background(), s.ID)
	done := ofType(evs, engine.EventTurnCompleted)
	if s.Checkpoint != done[0].Seq {
		t.Fatalf("checkpoint %d, turn.completed at %d", s.Checkpoint, done[0].Seq)
	}

	// Without a running turn: steering queued behind an open question.
	asked := newHarness(t, withAsk())
	asked.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"Sure?"}`}))
	s2 := asked.session()
	asked.send(s2.ID, "ask me")
	asked.waitTurns(s2.ID, 1)
	if _, _, err := asked.eng.Send(context.Background(), s2.ID, engine.Input{Text: "meanwhile", Author: "someone else"}); err != nil {
		t.Fatal(err)
	}
	if _, err := asked.eng.Cancel(context.Background(), s2.ID); err != nil {
		t.Fatal(err)
	}
	evs, _ = asked.eng.Events(context.Background(), s2.ID, 0, 0)
	errs = sessionErrors(t, evs)
	if len(errs) != 1 || errs[0].Code != engine.CodeInputCancelled || errs[0].InputID != ofType(evs, engine.EventUserMessage)[1].ID {
		t.Fatalf("session errors %+v\n%s", errs, dump(evs))
	}
	// A cancel is on purpose: resume with retry does not run it again.
	r, err := asked.eng.ResumeWith(context.Background(), s2.ID, engine.ResumeOptions{Retry: true})
	if err != nil || len(r.Retried) != 0 {
		t.Fatalf("retry after cancel: %v, %d retried", err, len(r.Retried))
	}
}

// Input queued during a turn that completed, then taken by a turn a crash
// cut off, is named by the recovery's session.error, so a retry runs it.
func TestEngine_CrashNamesInputQueuedBeforeTheCheckpoint(t *testing.T) {
	h := newHarness(t)
	first, second := make(chan struct{}), make(chan struct{})
	h.fake.Push(fakemodel.Block(first), fakemodel.Text("one"), fakemodel.Block(second))
	s := h.session()
	h.send(s.ID, "one")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	queued := h.send(s.ID, "two")
	close(first)
	if _, err := h.fake.WaitRequests(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	h.crash(func() { close(second) })
	s, evs := h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })
	if errs := sessionErrors(t, evs); len(errs) != 1 || errs[0].InputID != queued.ID {
		t.Fatalf("session errors %+v, want one for %s\n%s", errs, queued.ID, dump(evs))
	}
	h.fake.Push(fakemodel.Text("two"))
	r, err := h.eng.ResumeWith(context.Background(), s.ID, engine.ResumeOptions{Retry: true})
	if err != nil || len(r.Retried) != 1 || payload[engine.Input](t, r.Retried[0]).RetryOf != queued.ID {
		t.Fatalf("retry: %v %+v", err, r.Retried)
	}
}
