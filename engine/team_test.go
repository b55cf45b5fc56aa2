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
	"brain/engine/policy"
	"brain/tools"
)

func withPolicies(t *testing.T, ps ...policy.ApprovalPolicy) harnessOption {
	set, err := policy.CompilePolicies(ps)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *engine.Config, _ *engine.Agent) { c.Policies = set }
}

func withApprovers(who ...string) harnessOption {
	return func(_ *engine.Config, a *engine.Agent) { a.Approvers = who }
}

// restartTool is a second approval tool, so a policy can match one tool
// and not the other.
func restartTool(applies *atomic.Int64) tools.Definition {
	return tools.Definition{
		Name: "restart", Description: "Restart a service",
		Input:   json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}}}`),
		Preview: func(context.Context, tools.Call) (tools.Card, error) { return tools.Card{Title: "Restart"}, nil },
		Apply: func(context.Context, tools.Call, tools.Decision) (json.RawMessage, error) {
			applies.Add(1)
			return json.RawMessage(`{"restarted":true}`), nil
		},
	}
}

func lastRequest(h *harness) string {
	reqs := h.fake.Requests()
	return string(reqs[len(reqs)-1].Raw)
}

func TestEngine_DenyReasonReachesTheModel(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()))
	s := h.session()
	a := propose(t, h, s)
	got, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{By: "tester", Comment: "  not on a Friday; wait for Monday\x00 "})
	if err != nil || got.Status != engine.ApprovalDenied || got.Comment != "not on a Friday; wait for Monday" {
		t.Fatalf("deny: %v %+v", err, got)
	}
	decided := payload[engine.ApprovalDecided](t, ofType(mustEvents(t, h, s.ID), engine.EventApprovalDecided)[0])
	if decided.Comment != got.Comment || !decided.Denied() {
		t.Fatalf("approval.decided = %+v; want the reason", decided)
	}
	h.send(s.ID, "ok?")
	h.waitTurns(s.ID, 2)
	if last := lastRequest(h); !strings.Contains(last, `reason: \"not on a Friday; wait for Monday\"`) {
		t.Fatalf("the next request lacks the reason: %s", last)
	}
	if d.applies.Load() != 0 {
		t.Fatal("a denied change was applied")
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{By: "tester", Comment: strings.Repeat("x", engine.MaxComment+1)}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("an oversized comment: %v, want invalid", err)
	}
}

func TestEngine_ApproveCommentReachesTheModel(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()))
	s := h.session()
	a := propose(t, h, s)
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "tester", Comment: "go, but watch the error rate"}); err != nil {
		t.Fatal(err)
	}
	got := waitApproval(t, h, a.ID, engine.ApprovalApplied)
	if got.Comment != "go, but watch the error rate" {
		t.Fatalf("comment %q", got.Comment)
	}
	h.send(s.ID, "status?")
	h.waitTurns(s.ID, 2)
	if last := lastRequest(h); !strings.Contains(last, `comment: \"go, but watch the error rate\"`) {
		t.Fatalf("the next request lacks the comment: %s", last)
	}
}

func TestEngine_PolicyAutoApprovesOneToolNotAnother(t *testing.T) {
	d := &deployTool{}
	var restarts atomic.Int64
	h := newHarness(t, withTools(d.def(), restartTool(&restarts)),
		withPolicies(t, policy.ApprovalPolicy{Name: "restarts-are-safe", Tool: "rest*", Action: policy.PolicyAutoApprove}))
	s := h.session()
	h.fake.Push(fakemodel.ToolCalls(
		fakemodel.Call{ID: "c_restart", Name: "restart", Input: `{"service":"api"}`},
		fakemodel.Call{ID: "c_deploy", Name: "deploy", Input: `{"service":"api"}`},
	), fakemodel.Text("Restarting; the deploy waits."))
	h.send(s.ID, "restart and deploy")
	_, evs := h.waitTurns(s.ID, 1)

	list, _ := h.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: s.ID})
	var auto, asked engine.Approval
	for _, a := range list {
		if a.Tool == "restart" {
			auto = a
		} else {
			asked = a
		}
	}
	if asked.Status != engine.ApprovalPending || asked.Policy != "" {
		t.Fatalf("deploy: %+v; want pending for a person", asked)
	}
	auto = waitApproval(t, h, auto.ID, engine.ApprovalApplied)
	if auto.Policy != "restarts-are-safe" || auto.DecidedBy != "policy:restarts-are-safe" || restarts.Load() != 1 {
		t.Fatalf("restart: %+v, %d applies; want applied once under the policy", auto, restarts.Load())
	}
	decided := ofType(evs, engine.EventApprovalDecided)
	if len(decided) != 1 || payload[engine.ApprovalDecided](t, decided[0]).Policy != "restarts-are-safe" {
		t.Fatalf("decisions:\n%s", dump(decided))
	}
	for _, r := range results(t, evs) {
		text := r.Result.Content[0].Text
		if r.Name == "restart" && !strings.Contains(text, `Approved under policy "restarts-are-safe"`) {
			t.Errorf("restart result: %s", text)
		}
		if r.Name == "deploy" && !strings.Contains(text, "Nothing has been applied") {
			t.Errorf("deploy result: %s", text)
		}
	}
	if d.applies.Load() != 0 {
		t.Fatal("the deploy was applied without a person")
	}
}

func TestEngine_PolicyArgumentMatcherDenies(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withPolicies(t, policy.ApprovalPolicy{
		Name: "no-db-deploys", Tool: "deploy", Action: policy.PolicyDeny, Message: "the database is deployed by the DBA team",
		When: []policy.PolicyCondition{{Path: "$.service", Regexp: "^db"}},
	}))
	s := h.session()
	h.fake.Push(fakemodel.ToolCalls(
		fakemodel.Call{ID: "c_db", Name: "deploy", Input: `{"service":"db-primary"}`},
		fakemodel.Call{ID: "c_api", Name: "deploy", Input: `{"service":"api"}`},
	), fakemodel.Text("ok"))
	h.send(s.ID, "deploy both")
	_, evs := h.waitTurns(s.ID, 1)
	rs := results(t, evs)
	if !rs[0].Result.IsError || !strings.Contains(rs[0].Result.Content[0].Text, `refused by policy "no-db-deploys": the database is deployed by the DBA team`) {
		t.Errorf("db deploy: %+v", rs[0].Result)
	}
	if rs[1].Result.IsError {
		t.Errorf("api deploy: %+v", rs[1].Result)
	}
	if n := count(evs, engine.EventApprovalRequested); n != 1 {
		t.Errorf("%d cards, want one (the denied call gets none)", n)
	}
}

func TestEngine_PolicyForbidSelf(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withApprovers("tester", "ops"),
		withPolicies(t, policy.ApprovalPolicy{Name: "four-eyes", Tool: "deploy", Action: policy.PolicyReview, Require: 1, ForbidSelf: true}))
	s := h.session() // started by tester
	a := propose(t, h, s)
	if !a.ForbidSelf || a.Policy != "four-eyes" {
		t.Fatalf("approval %+v", a)
	}
	_, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "tester"})
	if !errors.Is(err, &engine.Error{Code: engine.CodeForbidden}) || !strings.Contains(err.Error(), "own request") {
		t.Fatalf("self-approval: %v, want forbidden", err)
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	waitApproval(t, h, a.ID, engine.ApprovalApplied)
}

func TestEngine_TwoApproversConcurrentClicksApplyOnce(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withApprovers("ann", "bob", "cy"),
		withPolicies(t, policy.ApprovalPolicy{Name: "two", Tool: "deploy", Action: policy.PolicyReview, Require: 2}))
	s := h.session()
	a := propose(t, h, s)
	people := []string{"ann", "bob", "cy"}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: people[i%3]})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, engine.ErrConflict) {
			t.Errorf("click %d: %v", i, err)
		}
	}
	got := waitApproval(t, h, a.ID, engine.ApprovalApplied)
	if d.applies.Load() != 1 || len(got.Votes) != 2 || got.Votes[0].By == got.Votes[1].By || got.DecidedBy != got.Votes[1].By {
		t.Fatalf("applies %d, votes %+v, decided by %s", d.applies.Load(), got.Votes, got.DecidedBy)
	}
	evs := mustEvents(t, h, s.ID)
	if count(evs, engine.EventApprovalVoted) != 1 || count(evs, engine.EventApprovalDecided) != 1 {
		t.Fatalf("want one vote and one decision:\n%s", dump(evs))
	}
	decided := payload[engine.ApprovalDecided](t, ofType(evs, engine.EventApprovalDecided)[0])
	if len(decided.Approvals) != 2 || decided.Policy != "two" {
		t.Fatalf("approval.decided %+v; want both approvals and the policy", decided)
	}
}

func TestEngine_OneDenyEndsATwoPersonApproval(t *testing.T) {
	d := &deployTool{}
	opts := []harnessOption{withTools(d.def()), withApprovers("ann", "bob", "cy"),
		withPolicies(t, policy.ApprovalPolicy{Name: "two", Tool: "deploy", Action: policy.PolicyReview, Require: 2})}
	h := newHarness(t, opts...)
	s := h.session()
	a := propose(t, h, s)
	got, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "ann", Comment: "fine by me"})
	if err != nil || got.Status != engine.ApprovalPending || len(got.Votes) != 1 {
		t.Fatalf("first approval: %v %+v", err, got)
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "ann"}); !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "already approved") {
		t.Fatalf("ann twice: %v", err)
	}
	// The vote survives a restart.
	h.crash(func() {}, opts...)
	if got, _ := h.eng.Approval(context.Background(), a.ID); len(got.Votes) != 1 || got.Votes[0].Comment != "fine by me" {
		t.Fatalf("after restart: %+v", got)
	}
	if got, err = h.eng.Decide(context.Background(), a.ID, engine.Decision{By: "bob", Comment: "the freeze is on"}); err != nil || got.Status != engine.ApprovalDenied {
		t.Fatalf("deny: %v %+v", err, got)
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "cy"}); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("approval after the deny: %v", err)
	}
	if d.applies.Load() != 0 {
		t.Fatal("applied after a deny")
	}
}

func TestEngine_ReminderThenExpiry(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), func(c *engine.Config, _ *engine.Agent) {
		c.ApprovalTTL, c.RemindBefore = 2*time.Hour, 30*time.Minute
	})
	s := h.session()
	a := propose(t, h, s)
	ctx := context.Background()
	if err := h.eng.RemindApprovals(ctx); err != nil || count(mustEvents(t, h, s.ID), engine.EventApprovalReminder) != 0 {
		t.Fatalf("reminded too early: %v", err)
	}
	h.advance(100 * time.Minute)
	for range 2 { // the second sweep finds it reminded already
		if err := h.eng.RemindApprovals(ctx); err != nil {
			t.Fatal(err)
		}
	}
	evs := mustEvents(t, h, s.ID)
	if reminders := ofType(evs, engine.EventApprovalReminder); len(reminders) != 1 ||
		!payload[engine.ApprovalReminder](t, reminders[0]).ExpiresAt.Equal(a.ExpiresAt) {
		t.Fatalf("reminders:\n%s", dump(reminders))
	}
	h.advance(time.Hour)
	if err := h.eng.ExpireApprovals(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.eng.Approval(ctx, a.ID); got.Status != engine.ApprovalExpired {
		t.Fatalf("status %s", got.Status)
	}
}

func TestEngine_ScheduleRefusesAnAutoApprovedTool(t *testing.T) {
	var restarts atomic.Int64
	h := newHarness(t, withTools(restartTool(&restarts)),
		withPolicies(t, policy.ApprovalPolicy{Name: "restarts-are-safe", Tool: "restart", Action: policy.PolicyAutoApprove}))
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "c1", Name: "restart", Input: `{}`}), fakemodel.Text("could not"))
	s, _, err := h.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Origin: engine.OriginSchedule, StartedBy: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	h.send(s.ID, "restart")
	_, evs := h.waitTurns(s.ID, 1)
	r := results(t, evs)[0]
	text := r.Result.Content[0].Text
	if !r.Result.IsError || !strings.Contains(text, `schedule "nightly"`) || !strings.Contains(text, `policy "restarts-are-safe" matches this call`) {
		t.Fatalf("result: %+v", r.Result)
	}
	if restarts.Load() != 0 || count(evs, engine.EventApprovalRequested) != 0 {
		t.Fatal("a schedule ran an approval tool")
	}
}
