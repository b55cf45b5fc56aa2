package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/policy"
	"brain/tools"
)

// linkedPeople is an engine.People over a fixed table "surface:id" ->
// person.
type linkedPeople map[string]string

var _ engine.People = linkedPeople{}

func (l linkedPeople) PersonOf(_ context.Context, surface, id string) (string, error) {
	return l[surface+":"+id], nil
}

func withPeople(p engine.People) harnessOption {
	return func(c *engine.Config, _ *engine.Agent) { c.People = p }
}

// The harness's sessions are started by "tester" through the API.
var team = linkedPeople{
	"api:tester": "alice", "slack:U_ALICE": "alice", "github:alice-gh": "alice",
	"slack:U_BOB": "bob", "github:bob-gh": "bob", "linear:lin-bob": "bob",
	"slack:U_CAROL": "carol",
}

func TestEngine_PersonApproverEntryAdmitsEachOfTheirIdentities(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withPeople(team), withApprovers("person:bob", "U_DAN"))
	ctx := context.Background()
	s := h.session()
	a := propose(t, h, s)
	for _, by := range []engine.Decision{
		{By: "U_CAROL", Surface: engine.SurfaceSlack},   // linked to another person
		{By: "bob-gh", Surface: engine.SurfaceSlack},    // bob's GitHub login, but said on Slack
		{By: "U_BOB", Surface: engine.SurfaceLinear},    // bob's Slack id, but said on Linear
		{By: "stranger", Surface: engine.SurfaceGitHub}, // nobody
	} {
		by.Approve = true
		if _, err := h.eng.Decide(ctx, a.ID, by); !errors.Is(err, errForbidden) {
			t.Fatalf("%+v decided: %v", by, err)
		}
	}
	got, err := h.eng.Decide(ctx, a.ID, engine.Decision{Approve: true, By: "bob-gh", Surface: engine.SurfaceGitHub})
	if err != nil || got.DecidedBy != "bob-gh" {
		t.Fatalf("bob's GitHub login as person:bob: %v %+v", err, got)
	}
	// A person entry is no group: the groups resolver is never asked.
	h2 := newHarness(t, withTools(d.def()), withPeople(team), withApprovers("person:bob"))
	a2 := propose(t, h2, h2.session())
	if err := h2.eng.MayDecide(ctx, a2.ID, engine.Decision{By: "lin-bob", Surface: engine.SurfaceLinear}); err != nil {
		t.Fatalf("bob on Linear: %v", err)
	}
}

func TestEngine_OnePersonOneVoteAcrossSurfaces(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withPeople(team),
		withApprovers("U_ALICE", "U_BOB", "bob-gh", "U_CAROL"),
		withPolicies(t, policy.ApprovalPolicy{Name: "two", Tool: "deploy", Action: policy.PolicyReview, Require: 2}))
	ctx := context.Background()
	a := propose(t, h, h.session())
	if got, err := h.eng.Decide(ctx, a.ID, engine.Decision{Approve: true, By: "U_BOB", Surface: engine.SurfaceSlack}); err != nil || got.Status != engine.ApprovalPending {
		t.Fatalf("bob on Slack: %v %+v", err, got)
	}
	_, err := h.eng.Decide(ctx, a.ID, engine.Decision{Approve: true, By: "bob-gh", Surface: engine.SurfaceGitHub})
	if !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "one person is one vote") {
		t.Fatalf("bob again from GitHub: %v, want a conflict", err)
	}
	got, err := h.eng.Decide(ctx, a.ID, engine.Decision{Approve: true, By: "U_CAROL", Surface: engine.SurfaceSlack})
	if err != nil || got.Status != engine.ApprovalApplying || len(got.Votes) != 2 || got.Votes[0].Person != "bob" || got.Votes[1].Person != "carol" {
		t.Fatalf("carol's vote: %v %+v", err, got)
	}
	waitApproval(t, h, a.ID, engine.ApprovalApplied)
	if d.applies.Load() != 1 {
		t.Fatalf("applied %d times", d.applies.Load())
	}
}

func TestEngine_ForbidSelfRefusesTheRequestersOtherIdentities(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withPeople(team),
		withApprovers("U_ALICE", "alice-gh", "U_BOB"),
		withPolicies(t, policy.ApprovalPolicy{Name: "not-self", Tool: "deploy", Action: policy.PolicyReview, Require: 1, ForbidSelf: true}))
	ctx := context.Background()
	a := propose(t, h, h.session()) // started by api:tester, who is alice
	for _, by := range []engine.Decision{
		{By: "U_ALICE", Surface: engine.SurfaceSlack},
		{By: "alice-gh", Surface: engine.SurfaceGitHub},
	} {
		by.Approve = true
		_, err := h.eng.Decide(ctx, a.ID, by)
		if !errors.Is(err, errForbidden) || !strings.Contains(err.Error(), "person:alice, who asked for this") {
			t.Fatalf("alice as %s: %v, want forbidden", by.By, err)
		}
	}
	// Denying her own request stays allowed.
	if err := h.eng.MayDecide(ctx, a.ID, engine.Decision{By: "alice-gh", Surface: engine.SurfaceGitHub}); err != nil {
		t.Fatalf("alice may deny: %v", err)
	}
	if got, err := h.eng.Decide(ctx, a.ID, engine.Decision{Approve: true, By: "U_BOB", Surface: engine.SurfaceSlack}); err != nil || got.Status != engine.ApprovalApplying {
		t.Fatalf("bob: %v %+v", err, got)
	}
}

func TestEngine_StarterOnAnotherSurfaceDecidesWithoutApprovers(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withPeople(team))
	a := propose(t, h, h.session())
	if err := h.eng.MayDecide(context.Background(), a.ID, engine.Decision{By: "U_BOB", Surface: engine.SurfaceSlack}); !errors.Is(err, errForbidden) {
		t.Fatalf("bob: %v", err)
	}
	if got, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "U_ALICE", Surface: engine.SurfaceSlack}); err != nil || got.Status != engine.ApprovalApplying {
		t.Fatalf("alice from Slack, who started it through the API: %v %+v", err, got)
	}
}

var errForbidden = &engine.Error{Code: engine.CodeForbidden}

// The apply acts as the person who decided, on the surface they decided
// from: bob's Slack click on a session started through the API is his
// Slack identity, kept on the approval across the apply (and a restart).
func TestEngine_ApplyApproverIsTheDecidersSurface(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, withTools(d.def()), withPeople(team), withApprovers("person:bob"))
	ctx := context.Background()
	a := propose(t, h, h.session()) // an API session
	got, err := h.eng.Decide(ctx, a.ID, engine.Decision{Approve: true, By: "U_BOB", Surface: engine.SurfaceSlack})
	if err != nil || got.DecidedSurface != engine.SurfaceSlack {
		t.Fatalf("bob on Slack: %v %+v", err, got)
	}
	waitApproval(t, h, a.ID, engine.ApprovalApplied)
	if who, _ := d.approver.Load().(tools.Identity); who != (tools.Identity{Surface: "slack", ExternalID: "U_BOB"}) {
		t.Fatalf("apply acted as %+v, want slack:U_BOB", who)
	}
}
