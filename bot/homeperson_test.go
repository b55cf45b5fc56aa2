package bot

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store"
)

// TestSlack_HomeTabListsTheirOtherIdentitiesApprovals: an approval of a
// session Alice started through the API, with her key (linked to her
// person, as her Slack user is), shows on her Slack Home tab, found by the
// database, and she decides it there; another person of the same name
// does not see it.
func TestSlack_HomeTabListsTheirOtherIdentitiesApprovals(t *testing.T) {
	sa := newSlackAppWith(t, "api_keys: [{name: alice-key, key: home-person-key-0f3c8e1d9a7b6c5d4e3f2a1b}]\n")
	ctx := t.Context()
	for _, p := range []struct {
		id  string
		ids []store.Identity
	}{
		{"alice", []store.Identity{{Surface: store.SurfaceSlack, ExternalID: "UALICE"}, {Surface: store.SurfaceAPI, ExternalID: "alice-key"}}},
		{"alice2", []store.Identity{{Surface: store.SurfaceSlack, ExternalID: "UALICE2"}}},
	} {
		if err := sa.app.store.SavePerson(ctx, store.Person{ID: p.id, Name: "Alice", UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		for _, id := range p.ids {
			if err := sa.app.store.LinkIdentity(ctx, time.Now(), p.id, id); err != nil {
				t.Fatal(err)
			}
		}
	}

	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}),
		fakemodel.Text("Proposed."),
	)
	var s engine.Session
	sa.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "deploy the api"}, &s)
	pending := func() []engine.Approval {
		a, err := sa.app.engine.Approvals(ctx, engine.ApprovalFilter{SessionID: s.ID, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(pending()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no approval pending in the API session")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, err := sa.app.engine.Session(ctx, s.ID); err != nil || got.StartedBy != "alice-key" || got.Origin != engine.OriginAPI {
		t.Fatalf("session %+v, %v: want started by alice-key through the API", got, err)
	}

	sa.openHome("EvH1", "UALICE")
	home := sa.waitHome("UALICE", "Deploy api")
	if !strings.Contains(home, "brain_approve") {
		t.Fatalf("Alice's Home tab lacks the Approve button: %s", home)
	}
	sa.openHome("EvH2", "UALICE2")
	if v := sa.waitHome("UALICE2", "Nothing waits for you."); strings.Contains(v, "Deploy api") {
		t.Fatalf("the other Alice's Home tab lists the approval: %s", v)
	}

	sa.clickHome("UALICE", "brain_approve", sa.homeButton("UALICE", "brain_approve"))
	sa.waitHome("UALICE", "Approved: Deploy api")
	for sa.applied.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("applied %d times", sa.applied.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a, err := sa.app.engine.Approvals(ctx, engine.ApprovalFilter{SessionID: s.ID}); err != nil || len(a) != 1 || a[0].DecidedBy != "UALICE" {
		t.Fatalf("approvals %+v, %v: want one decided by UALICE", a, err)
	}
}
