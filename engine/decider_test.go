package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/policy"
	"brain/tools"
)

// TestEngine_DecidableApprovalsFindsOldOnes: the approvals a person may
// decide are found by the database however many newer ones others decide
// (a scan of the newest 500 pending missed the oldest here), and only
// those: each by the rule Decide applies.
func TestEngine_DecidableApprovalsFindsOldOnes(t *testing.T) {
	ctx := context.Background()
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withApprovers("ann"))
	mine := propose(t, h, h.session()) // agent "default", approvers [ann]

	bob, _, err := h.eng.CreateSession(ctx, engine.NewSession{Agent: "default", Interactive: true, StartedBy: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	// 600 newer approvals of an agent no longer configured: decided by
	// whoever started their session, bob.
	const others = 600
	for i := range others {
		at := mine.CreatedAt.Add(time.Duration(i+1) * time.Second)
		a := engine.Approval{ID: fmt.Sprintf("gone-%03d", i), CallID: fmt.Sprintf("call-%03d", i), Tool: "deploy", Agent: "gone",
			Input: json.RawMessage(`{}`), Card: tools.Card{Title: "Deploy"}, Status: engine.ApprovalPending,
			CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour)}
		if _, err := h.store.Commit(ctx, engine.Commit{SessionID: bob.ID, Now: at, NewApproval: &a,
			Events: []engine.Event{{ID: "req-" + a.ID, Type: engine.EventApprovalRequested}}}); err != nil {
			t.Fatal(err)
		}
	}

	got, err := h.eng.DecidableApprovals(ctx, engine.Decision{By: "ann", Surface: engine.SurfaceSlack}, 500)
	if err != nil || len(got) != 1 || got[0].ID != mine.ID {
		t.Fatalf("ann may decide %d approvals (%v), want only %s", len(got), err, mine.ID)
	}
	got, err = h.eng.DecidableApprovals(ctx, engine.Decision{By: "bob", Surface: engine.SurfaceSlack}, 500)
	if err != nil || len(got) != 500 || got[0].ID != fmt.Sprintf("gone-%03d", others-1) {
		t.Fatalf("bob: %d approvals (%v), want the newest 500 of his %d", len(got), err, others)
	}
	for _, a := range got {
		if a.Agent != "gone" {
			t.Fatalf("bob may not decide %s of agent %s (its approver is ann)", a.ID, a.Agent)
		}
	}
	// The session's starter does not decide an agent with approvers.
	if got, err := h.eng.DecidableApprovals(ctx, engine.Decision{By: "tester", Surface: engine.SurfaceSlack}, 500); err != nil || len(got) != 0 {
		t.Fatalf("tester: %d approvals (%v), want none", len(got), err)
	}
	// Once decided, it leaves her list.
	if _, err := h.eng.Decide(ctx, mine.ID, engine.Decision{Approve: true, By: "ann"}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.eng.DecidableApprovals(ctx, engine.Decision{By: "ann", Surface: engine.SurfaceSlack}, 500); err != nil || len(got) != 0 {
		t.Fatalf("after her decision ann has %d approvals (%v), want none", len(got), err)
	}
}

// TestEngine_DecidableApprovalsSkipsTheirPersonsVote: once a person has
// voted on an approval that needs two, it leaves the lists of each of
// their identities (one person is one vote), not only the one they voted
// with; another approver still sees it.
func TestEngine_DecidableApprovalsSkipsTheirPersonsVote(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withPeople(team),
		withApprovers("U_BOB", "person:bob", "U_CAROL"),
		withPolicies(t, policy.ApprovalPolicy{Name: "two", Tool: "deploy", Action: policy.PolicyReview, Require: 2}))
	ctx := context.Background()
	a := propose(t, h, h.session())
	listed := func(d engine.Decision) bool {
		t.Helper()
		got, err := h.eng.DecidableApprovals(ctx, d, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(got) == 1 && got[0].ID == a.ID
	}
	bobGitHub := engine.Decision{By: "bob-gh", Surface: engine.SurfaceGitHub}
	if !listed(bobGitHub) {
		t.Fatal("bob's GitHub login (person:bob) does not see the approval")
	}
	if _, err := h.eng.Decide(ctx, a.ID, engine.Decision{Approve: true, By: "U_BOB", Surface: engine.SurfaceSlack}); err != nil {
		t.Fatal(err)
	}
	if listed(bobGitHub) || listed(engine.Decision{By: "U_BOB", Surface: engine.SurfaceSlack}) {
		t.Fatal("after bob's vote on Slack, an identity of his still lists the approval")
	}
	if !listed(engine.Decision{By: "U_CAROL", Surface: engine.SurfaceSlack}) {
		t.Fatal("carol, who has not voted, does not see the approval")
	}
}
