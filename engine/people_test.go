package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	h.now = h.now.Add(d)
	h.mu.Unlock()
}

func withAsk() harnessOption {
	return func(_ *engine.Config, a *engine.Agent) { a.Ask = true }
}

const envQuestion = `{"text":"Which environment?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`

// ask may be offered only to some turns, as seed 002's example does.
func TestEngine_ConditionalAsk(t *testing.T) {
	h := newHarness(t, func(_ *engine.Config, a *engine.Agent) {
		a.When = []engine.Conditional{{
			Match: func(in string) bool { return strings.Contains(in, "propose") },
			Ask:   true,
		}}
	})
	s := h.session()
	h.send(s.ID, "just do it")
	h.waitTurns(s.ID, 1)
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_ask", Name: "ask", Input: envQuestion}))
	h.send(s.ID, "propose an approach")
	s, _ = h.waitTurns(s.ID, 2)
	reqs := h.fake.Requests()
	if strings.Contains(string(reqs[0].Raw), `"name":"ask"`) || !strings.Contains(string(reqs[1].Raw), `"name":"ask"`) {
		t.Fatalf("ask offered to the wrong turns:\n%s\n%s", reqs[0].Raw, reqs[1].Raw)
	}
	if s.Status != engine.StatusAwaitingInput || s.OpenQuestion() == nil {
		t.Fatalf("the conditional ask did not open a question: %s", s.Status)
	}
}

func TestEngine_AskOpensQuestionAndEndsTurn(t *testing.T) {
	h := newHarness(t, withAsk())
	h.fake.Push(fakemodel.TextAndTools("Let me check.", fakemodel.Call{ID: "toolu_ask", Name: "ask", Input: envQuestion}))
	s := h.session()
	h.send(s.ID, "deploy")
	s, evs := h.waitTurns(s.ID, 1)
	if s.Status != engine.StatusAwaitingInput || outcome(t, evs) != engine.OutcomeQuestion {
		t.Fatalf("status %s outcome %s", s.Status, outcome(t, evs))
	}
	q := s.OpenQuestion()
	if q == nil || q.Text != "Which environment?" || len(q.Options) != 2 || q.CallID != callID(t, evs, "toolu_ask") {
		t.Fatalf("question %+v", q)
	}
	if count(evs, engine.EventQuestionAsked) != 1 || h.fake.Received() != 1 {
		t.Fatalf("question.asked %d, model calls %d", count(evs, engine.EventQuestionAsked), h.fake.Received())
	}
	if !strings.Contains(string(h.fake.Requests()[0].Raw), `"name":"ask"`) {
		t.Fatal("ask not offered")
	}
}

func TestEngine_AnswerByValueLabelAndText(t *testing.T) {
	for _, c := range []struct {
		name      string
		input     engine.Input
		wantValue string
		wantText  string
	}{
		{"value", engine.Input{Text: "x", Answer: &engine.Answer{Value: "prod"}}, "prod", "Production"},
		{"typed label", engine.Input{Text: "staging", Author: "tester"}, "stg", "staging"},
		{"typed value", engine.Input{Text: " PROD ", Author: "tester"}, "prod", " PROD"},
		{"free text", engine.Input{Text: "neither, use dev", Author: "tester"}, "", "neither, use dev"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, withAsk())
			h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: envQuestion}), fakemodel.Text("Going ahead."))
			s := h.session()
			h.send(s.ID, "deploy")
			s, _ = h.waitTurns(s.ID, 1)
			in := c.input
			if in.Answer != nil {
				in.Answer.QuestionID = s.OpenQuestion().ID
			}
			ev, _, err := h.eng.Send(context.Background(), s.ID, in)
			if err != nil {
				t.Fatal(err)
			}
			got := payload[engine.Input](t, ev)
			if got.Answer == nil || got.Answer.Value != c.wantValue || got.Answer.Text != c.wantText {
				t.Fatalf("recorded answer %+v", got.Answer)
			}
			s, _ = h.waitTurns(s.ID, 2)
			if s.Status != engine.StatusIdle || s.OpenQuestion() != nil {
				t.Fatalf("after answer: %s %s", s.Status, s.Question)
			}
			req := string(h.fake.Requests()[1].Raw)
			if !strings.Contains(req, "Answer to your question") {
				t.Fatalf("model did not get the answer: %s", req)
			}
		})
	}
}

func TestEngine_SteeringWaitsForTheAnswer(t *testing.T) {
	h := newHarness(t, withAsk())
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: envQuestion}), fakemodel.Text("done"))
	s := h.session()
	h.send(s.ID, "deploy")
	s, _ = h.waitTurns(s.ID, 1)
	q := s.OpenQuestion()

	steer, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "careful, friday freeze", Author: "colleague"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := h.eng.Session(context.Background(), s.ID)
	if got.Status != engine.StatusAwaitingInput || got.OpenQuestion() == nil {
		t.Fatalf("steering answered the question: %s", got.Status)
	}
	_, _, err = h.eng.Send(context.Background(), s.ID, engine.Input{Text: "x", Answer: &engine.Answer{QuestionID: "q_wrong", Value: "stg"}})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("wrong question id: %v", err)
	}
	_, _, err = h.eng.Send(context.Background(), s.ID, engine.Input{Text: "x", Answer: &engine.Answer{QuestionID: q.ID, Value: "nope"}})
	if !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("bad value: %v", err)
	}
	answer, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "stg", Answer: &engine.Answer{QuestionID: q.ID, Value: "stg"}})
	if err != nil {
		t.Fatal(err)
	}
	_, evs := h.waitTurns(s.ID, 2)
	ids := payload[engine.TurnStarted](t, ofType(evs, engine.EventTurnStarted)[1]).InputIDs
	if len(ids) != 2 || ids[0] != steer.ID || ids[1] != answer.ID {
		t.Fatalf("second turn inputs %v, want steering then answer", ids)
	}
	req := string(h.fake.Requests()[1].Raw)
	if !strings.Contains(req, "friday freeze") || !strings.Contains(req, "Staging") {
		t.Fatalf("model lacks steering or answer: %s", req)
	}
}

func TestEngine_CancelClosesQuestion(t *testing.T) {
	h := newHarness(t, withAsk())
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: envQuestion}))
	s := h.session()
	h.send(s.ID, "deploy")
	h.waitTurns(s.ID, 1)
	got, err := h.eng.Cancel(context.Background(), s.ID)
	if err != nil || got.Status != engine.StatusIdle || got.OpenQuestion() != nil {
		t.Fatalf("cancel: %v %s %s", err, got.Status, got.Question)
	}
}

func TestEngine_AskValidation(t *testing.T) {
	h := newHarness(t, withAsk())
	seven := `{"text":"pick","options":[` + strings.Repeat(`{"label":"a","value":"a"},`, 6) + `{"label":"b","value":"b"}]}`
	h.fake.Push(fakemodel.ToolCalls(
		fakemodel.Call{ID: "c1", Name: "ask", Input: seven},
		fakemodel.Call{ID: "c2", Name: "ask", Input: `{"text":""}`},
		fakemodel.Call{ID: "c3", Name: "ask", Input: `{"text":"ok?","options":[{"label":"` + strings.Repeat("x", 81) + `","value":"v"}]}`},
	), fakemodel.Text("fine"))
	s := h.session()
	h.send(s.ID, "go")
	s, evs := h.waitTurns(s.ID, 1)
	for _, r := range results(t, evs) {
		if !r.Result.IsError || r.Result.UnknownOutcome {
			t.Errorf("%s accepted: %+v", r.CallID, r.Result)
		}
	}
	if s.Status != engine.StatusIdle || s.OpenQuestion() != nil {
		t.Fatalf("an invalid question was opened: %s", s.Status)
	}
}

func TestEngine_ResultToolCommitReplaceAndKeep(t *testing.T) {
	report := tools.Definition{
		Name: "report", Description: "Report the outcome", Result: true,
		Input:  json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"},"pad":{"type":"string"}},"required":["status"]}`),
		Output: json.RawMessage(`{"type":"object","properties":{"status":{"enum":["one","two"]}},"required":["status"]}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return c.Input, nil
		},
	}
	h := newHarness(t, withTools(report))
	h.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{ID: "r1", Name: "report", Input: `{"status":"one"}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "r2", Name: "report", Input: `{"status":"two"}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "r3", Name: "report", Input: `{"status":"three"}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "r4", Name: "report", Input: `{"status":"one","pad":"` + strings.Repeat("x", 9000) + `"}`}),
		fakemodel.Text("reported"),
		fakemodel.Fail(401, "key revoked"),
	)
	s := h.session()
	h.send(s.ID, "report it")
	s, evs := h.waitTurns(s.ID, 1)
	if res, err := s.LatestResult(); err != nil || res == nil || res.CallID != callID(t, evs, "r2") || string(res.Data) != `{"status":"two"}` {
		t.Fatalf("session result %s", s.Result)
	}
	rs := results(t, evs)
	if rs[2].Result.IsError != true || !strings.Contains(rs[3].Result.Content[0].Text, "8192-byte limit") {
		t.Fatalf("invalid/oversized results accepted: %+v %+v", rs[2], rs[3])
	}
	if count(evs, engine.EventResultCommitted) != 2 {
		t.Fatalf("%d result.committed", count(evs, engine.EventResultCommitted))
	}
	// A failed turn never clears the result.
	h.send(s.ID, "again")
	h.waitFor(s.ID, "failed", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusFailed })
	s, _ = h.eng.Session(context.Background(), s.ID)
	if !strings.Contains(string(s.Result), `"`+callID(t, evs, "r2")+`"`) {
		t.Fatalf("result cleared by failed turn: %s", s.Result)
	}
	history, err := h.eng.Results(context.Background(), s.ID)
	if err != nil || len(history) != 2 || history[0].CallID != callID(t, evs, "r1") || history[1].CallID != callID(t, evs, "r2") {
		t.Fatalf("history %v %+v", err, history)
	}
}

func TestEngine_ResultRefusedFromStoppedTurn(t *testing.T) {
	entered := make(chan struct{})
	report := tools.Definition{
		Name: "report", Description: "slow report", Result: true,
		Output: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			close(entered)
			<-ctx.Done()
			return json.RawMessage(`{"late":true}`), nil // answers after the turn was cancelled
		},
	}
	h := newHarness(t, withTools(report))
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "r1", Name: "report"}))
	s := h.session()
	h.send(s.ID, "go")
	<-entered
	if _, err := h.eng.Cancel(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	s, evs := h.waitTurns(s.ID, 1)
	if len(s.Result) != 0 || count(evs, engine.EventResultCommitted) != 0 {
		t.Fatalf("result from a stopped turn committed: %s", s.Result)
	}
	if rs := results(t, evs); len(rs) != 1 || !rs[0].Result.IsError {
		t.Fatalf("results %+v", rs)
	}
}

// deployTool is an approval tool whose apply is counted and observed.
type deployTool struct {
	applies   atomic.Int64
	decisions sync.Map // decision id -> count
	applyFunc func(ctx context.Context, d tools.Decision) (json.RawMessage, error)
	approver  atomic.Value // tools.Identity of the last apply's decider
}

func (d *deployTool) def() tools.Definition {
	return tools.Definition{
		Name: "deploy", Description: "Deploy a service",
		Input: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}`),
		Preview: func(ctx context.Context, c tools.Call) (tools.Card, error) {
			var in struct{ Service string }
			_ = json.Unmarshal(c.Input, &in)
			return tools.Card{Title: "Deploy " + in.Service, Facts: []tools.Fact{{Label: "Service", Value: in.Service}}}, nil
		},
		Apply: func(ctx context.Context, c tools.Call, dec tools.Decision) (json.RawMessage, error) {
			d.applies.Add(1)
			d.approver.Store(c.Approver)
			n, _ := d.decisions.LoadOrStore(dec.ID, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			if d.applyFunc != nil {
				return d.applyFunc(ctx, dec)
			}
			return json.RawMessage(`{"deployed":true}`), nil
		},
	}
}

// propose runs a turn in which the model proposes one deploy; it returns the
// pending approval.
func propose(t *testing.T, h *harness, s engine.Session) engine.Approval {
	t.Helper()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_deploy", Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	h.send(s.ID, "deploy the api")
	_, evs := h.waitTurns(s.ID, 1+count(mustEvents(t, h, s.ID), engine.EventTurnCompleted))
	if count(evs, engine.EventApprovalRequested) == 0 {
		t.Fatalf("no approval.requested:\n%s", dump(evs))
	}
	list, err := h.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: s.ID, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %v %+v", err, list)
	}
	return list[0]
}

func mustEvents(t *testing.T, h *harness, id string) []engine.Event {
	t.Helper()
	evs, err := h.eng.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func waitApproval(t *testing.T, h *harness, id string, want engine.ApprovalStatus) engine.Approval {
	t.Helper()
	a, _ := h.eng.Approval(context.Background(), id)
	h.waitFor(a.SessionID, "approval "+string(want), func(engine.Session, []engine.Event) bool {
		a, _ = h.eng.Approval(context.Background(), id)
		return a.Status == want
	})
	return a
}

func TestEngine_ApprovalApproveAppliesOnce(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()))
	s := h.session()
	a := propose(t, h, s)
	if a.Card.Title != "Deploy api" || string(a.Input) != `{"service":"api"}` || a.RequestedBy != "tester" || a.Tool != "deploy" {
		t.Fatalf("approval %+v", a)
	}
	evs := mustEvents(t, h, s.ID)
	rs := results(t, evs)
	if rs[0].Result.IsError || !strings.Contains(rs[0].Result.Content[0].Text, "Nothing has been applied") {
		t.Fatalf("model was not told it is pending: %+v", rs[0])
	}
	if d.applies.Load() != 0 {
		t.Fatal("applied before approval")
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "mallory"}); !errors.Is(err, &engine.Error{Code: engine.CodeForbidden}) {
		t.Fatalf("stranger decided: %v", err)
	}
	got, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "tester"})
	if err != nil || got.DecisionID == "" || got.DecidedBy != "tester" {
		t.Fatalf("decide: %v %+v", err, got)
	}
	got = waitApproval(t, h, a.ID, engine.ApprovalApplied)
	if d.applies.Load() != 1 || string(got.Output) != `{"deployed":true}` {
		t.Fatalf("applies %d output %s", d.applies.Load(), got.Output)
	}
	if _, ok := d.decisions.Load(got.DecisionID); !ok {
		t.Fatal("apply did not get the decision id")
	}
	_, err = h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: false, By: "tester"})
	if !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "approved by tester") {
		t.Fatalf("second decision: %v", err)
	}
	evs = mustEvents(t, h, s.ID)
	for _, typ := range []string{engine.EventApprovalRequested, engine.EventApprovalDecided, engine.EventApprovalApplied} {
		if count(evs, typ) != 1 {
			t.Errorf("%d %s events", count(evs, typ), typ)
		}
	}
	// The next turn knows what happened.
	h.send(s.ID, "status?")
	h.waitTurns(s.ID, 2)
	last := string(h.fake.Requests()[len(h.fake.Requests())-1].Raw)
	if !strings.Contains(last, "approved by tester") || !strings.Contains(last, "applied") {
		t.Fatalf("next turn lacks the decision: %s", last)
	}
}

func TestEngine_ApprovalDeny(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()))
	s := h.session()
	a := propose(t, h, s)
	got, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: false, By: "tester"})
	if err != nil || got.Status != engine.ApprovalDenied {
		t.Fatalf("deny: %v %s", err, got.Status)
	}
	if d.applies.Load() != 0 {
		t.Fatal("denied change applied")
	}
}

func TestEngine_ApprovalConcurrentDecisionsOneWinner(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), func(_ *engine.Config, a *engine.Agent) { a.Approvers = []string{"ops"} })
	s := h.session()
	a := propose(t, h, s)
	var wins, conflicts atomic.Int64
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: i%2 == 0, By: "ops"})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, engine.ErrConflict):
				conflicts.Add(1)
			default:
				t.Errorf("decide: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != 49 {
		t.Fatalf("wins %d conflicts %d", wins.Load(), conflicts.Load())
	}
	got, _ := h.eng.Approval(context.Background(), a.ID)
	if got.Status == engine.ApprovalApplying {
		got = waitApproval(t, h, a.ID, engine.ApprovalApplied)
	}
	want := int64(0)
	if got.Status == engine.ApprovalApplied {
		want = 1
	}
	if d.applies.Load() != want {
		t.Fatalf("status %s, applies %d", got.Status, d.applies.Load())
	}
	if n := count(mustEvents(t, h, s.ID), engine.EventApprovalDecided); n != 1 {
		t.Fatalf("%d decided events", n)
	}
}

func TestEngine_ApprovalExpires(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), func(c *engine.Config, _ *engine.Agent) { c.ApprovalTTL = time.Hour })
	s := h.session()
	a := propose(t, h, s)
	h.advance(2 * time.Hour)
	if err := h.eng.ExpireApprovals(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _ := h.eng.Approval(context.Background(), a.ID)
	if got.Status != engine.ApprovalExpired {
		t.Fatalf("status %s", got.Status)
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "tester"}); !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("decide expired: %v", err)
	}
	if count(mustEvents(t, h, s.ID), engine.EventApprovalExpired) != 1 || d.applies.Load() != 0 {
		t.Fatal("expiry not recorded, or applied")
	}
}

func TestEngine_ApprovalUnconfirmedThenRetry(t *testing.T) {
	d := &deployTool{}
	var fail atomic.Bool
	fail.Store(true)
	d.applyFunc = func(ctx context.Context, dec tools.Decision) (json.RawMessage, error) {
		if fail.Load() {
			return nil, tools.Unknown("connection reset after sending")
		}
		return json.RawMessage(`{"ok":1}`), nil
	}
	h := newHarness(t, withTools(d.def()))
	s := h.session()
	a := propose(t, h, s)
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "tester"}); err != nil {
		t.Fatal(err)
	}
	got := waitApproval(t, h, a.ID, engine.ApprovalUnconfirmed)
	if !strings.Contains(got.Error, "connection reset") {
		t.Fatalf("error %q", got.Error)
	}
	fail.Store(false)
	if _, err := h.eng.Retry(context.Background(), a.ID, engine.Decision{By: "tester"}); err != nil {
		t.Fatal(err)
	}
	got = waitApproval(t, h, a.ID, engine.ApprovalApplied)
	n, _ := d.decisions.Load(got.DecisionID)
	if d.applies.Load() != 2 || n.(*atomic.Int64).Load() != 2 || got.Attempts != 2 {
		t.Fatalf("applies %d, attempts %d: the retry must reuse the decision id", d.applies.Load(), got.Attempts)
	}
	if _, err := h.eng.Retry(context.Background(), a.ID, engine.Decision{By: "tester"}); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("retry of applied: %v", err)
	}
}

func TestEngine_CrashDuringApplyLeavesUnconfirmed(t *testing.T) {
	d := &deployTool{}
	entered := make(chan struct{})
	release := make(chan struct{})
	d.applyFunc = func(ctx context.Context, dec tools.Decision) (json.RawMessage, error) {
		if d.applies.Load() == 1 {
			close(entered)
			<-release // the answer never arrives before the "crash"
		}
		return json.RawMessage(`{"ok":true}`), nil
	}
	h := newHarness(t, withTools(d.def()))
	s := h.session()
	a := propose(t, h, s)
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "tester"}); err != nil {
		t.Fatal(err)
	}
	<-entered
	crashed, crashedStore := h.eng, h.store
	h.eng = nil
	h.open(withTools(d.def()))
	got, _ := h.eng.Approval(context.Background(), a.ID)
	if got.Status != engine.ApprovalUnconfirmed || d.applies.Load() != 1 {
		t.Fatalf("after restart: %s, applies %d", got.Status, d.applies.Load())
	}
	if count(mustEvents(t, h, s.ID), engine.EventApprovalUnconfirmed) != 1 {
		t.Fatal("no approval.unconfirmed event")
	}
	// Let the abandoned apply finish; it must not overwrite the new state.
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = crashed.Stop(ctx)
	_ = crashedStore.Close()
	if got, _ := h.eng.Approval(context.Background(), a.ID); got.Status != engine.ApprovalUnconfirmed {
		t.Fatalf("abandoned apply changed the status to %s", got.Status)
	}
	if _, err := h.eng.Retry(context.Background(), a.ID, engine.Decision{By: "tester"}); err != nil {
		t.Fatal(err)
	}
	got = waitApproval(t, h, a.ID, engine.ApprovalApplied)
	n, _ := d.decisions.Load(got.DecisionID)
	if n.(*atomic.Int64).Load() != 2 {
		t.Fatalf("decision id used %d times", n.(*atomic.Int64).Load())
	}
}

func TestEngine_NonInteractiveSessionRefusesAskAndApprovals(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withAsk(), withTools(d.def()))
	h.fake.Push(
		fakemodel.ToolCalls(
			fakemodel.Call{ID: "c_ask", Name: "ask", Input: `{"text":"Go ahead?"}`},
			fakemodel.Call{ID: "c_deploy", Name: "deploy", Input: `{"service":"api"}`},
		),
		fakemodel.Text("Could not deploy without approval."),
	)
	s, _, err := h.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Origin: engine.OriginSchedule, StartedBy: "nightly", Interactive: false})
	if err != nil {
		t.Fatal(err)
	}
	h.send(s.ID, "deploy nightly")
	s, evs := h.waitTurns(s.ID, 1)
	if s.Status != engine.StatusIdle || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("status %s outcome %s", s.Status, outcome(t, evs))
	}
	for _, r := range results(t, evs) {
		text := r.Result.Content[0].Text
		if !r.Result.IsError || r.Result.UnknownOutcome || !strings.Contains(text, `schedule "nightly"`) || !strings.Contains(text, "nobody") {
			t.Errorf("%s: %+v", r.CallID, r.Result)
		}
	}
	pending, _ := h.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: s.ID})
	if len(pending) != 0 || s.OpenQuestion() != nil || count(evs, engine.EventQuestionAsked) != 0 {
		t.Fatalf("something was left pending: %+v %s", pending, s.Question)
	}
}

func TestEngine_ProgressIsRecorded(t *testing.T) {
	slow := tools.Definition{
		Name: "import", Description: "import the catalog",
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			if c.ToolCallID == "toolu_imp" || c.IdempotencyKey() != c.SessionID+":"+c.ToolCallID {
				return nil, tools.Failed("idempotency key %q", c.IdempotencyKey())
			}
			for _, phase := range []string{"downloading", "processing"} {
				if err := c.ReportProgress(ctx, map[string]string{"phase": phase}); err != nil {
					return nil, err
				}
			}
			return json.RawMessage(`{"imported":true}`), nil
		},
	}
	h := newHarness(t, withTools(slow))
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_imp", Name: "import"}), fakemodel.Text("done"))
	s := h.session()
	h.send(s.ID, "import")
	_, evs := h.waitTurns(s.ID, 1)
	progress := ofType(evs, engine.EventToolProgress)
	if len(progress) != 2 || !strings.Contains(string(payload[engine.ToolProgress](t, progress[0]).Data), `"phase":"downloading"`) || payload[engine.ToolProgress](t, progress[0]).CallID != callID(t, evs, "toolu_imp") {
		t.Fatalf("progress events:\n%s", dump(progress))
	}
	if rs := results(t, evs); rs[0].Result.IsError {
		t.Fatalf("result %+v", rs[0])
	}
}

func TestEngine_PlatformApprovalsNeedAnAuthorizedPerson(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()))
	s, _, err := h.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Origin: engine.OriginSlack, ThreadKey: "slack:T1:C1:1.0", StartedBy: "U_ANN", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	a := propose(t, h, s)
	// An API key does not make anyone an approver of a Slack session.
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "U_EVE", ViaAPI: true}); !errors.Is(err, &engine.Error{Code: engine.CodeForbidden}) {
		t.Fatalf("unauthorized platform decision: %v", err)
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "U_ANN", ViaAPI: true}); err != nil {
		t.Fatalf("the person who started the session: %v", err)
	}
	waitApproval(t, h, a.ID, engine.ApprovalApplied)
}

func TestEngine_TwoResultToolsRejected(t *testing.T) {
	mk := func(name string) *tools.Tool {
		tool, err := tools.Compile(tools.Definition{Name: name, Description: "d", Result: true, Output: json.RawMessage(`{}`),
			Run: func(context.Context, tools.Call) (json.RawMessage, error) { return nil, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	h := newHarness(t)
	_, err := engine.New(engine.Config{
		Store: h.store, Clock: time.Now, NewID: func(string) string { return "x" },
		Agents: []*engine.Agent{{Name: "a", Model: scriptedModel{}, Tools: []*tools.Tool{mk("r1"), mk("r2")}}},
	})
	if err == nil || !strings.Contains(err.Error(), `agent "a": has 2 result tools`) {
		t.Fatalf("err %v", err)
	}
}
