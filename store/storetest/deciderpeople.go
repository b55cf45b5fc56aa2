package storetest

import (
	"context"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// testApprovalsDeciderPeople: the decider filter counts a session as the
// person's whichever of their linked identities started it (Slack, the
// API, Linear, the console), as the engine's rule does; a namesake who is
// another person, and an identity whose console link names someone else,
// do not count; and the limit applies after the filter.
func testApprovalsDeciderPeople(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	for _, p := range []struct {
		id, name string
		ids      []store.Identity
	}{
		{"alice", "Alice", []store.Identity{{Surface: store.SurfaceSlack, ExternalID: "UALICE"},
			{Surface: store.SurfaceAPI, ExternalID: "alice-key"}, {Surface: store.SurfaceLinear, ExternalID: "lin-alice"}}},
		// Another Alice: same name, another person.
		{"alice2", "Alice", []store.Identity{{Surface: store.SurfaceSlack, ExternalID: "UALICE2"}}},
		// UX is alice's in Slack but mallory's in the console: a console
		// session of UX is mallory's (the console link is looked up first).
		{"mallory", "Mallory", []store.Identity{{Surface: store.SurfaceConsole, ExternalID: "UX"}}},
	} {
		if err := st.SavePerson(ctx, store.Person{ID: p.id, Name: p.name, UpdatedAt: T0}); err != nil {
			t.Fatal(err)
		}
		for _, id := range p.ids {
			if err := st.LinkIdentity(ctx, T0, p.id, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.LinkIdentity(ctx, T0, "alice", store.Identity{Surface: store.SurfaceSlack, ExternalID: "UX"}); err != nil {
		t.Fatal(err)
	}

	sessions := map[string]engine.Session{}
	for _, s := range []struct {
		id, by string
		origin engine.Origin
	}{
		{"alice-slack", "UALICE", engine.OriginSlack},
		{"alice-api", "alice-key", engine.OriginAPI},
		{"alice-linear", "lin-alice", engine.OriginLinear},
		{"alice-console", "UALICE", engine.OriginConsole}, // no console link: her Slack one
		{"namesake-slack", "UALICE2", engine.OriginSlack},
		{"unlinked-linear", "UALICE", engine.OriginLinear}, // her Slack id, but not linked in Linear
		{"mallory-console", "UX", engine.OriginConsole},
		{"ux-slack", "UX", engine.OriginSlack},
		{"nobody-slack", "", engine.OriginSlack},
	} {
		ss := Session(s.id, T0)
		ss.StartedBy, ss.Origin = s.by, s.origin
		CreateSession(t, st, ss)
		sessions[s.id] = ss
	}
	minute := 0
	add := func(id, session, agent string) {
		a := Approval(id, T0.Add(time.Duration(minute)*time.Minute))
		minute++
		a.Agent = agent
		addApproval(t, st, session, a)
	}
	for _, s := range []string{"alice-slack", "alice-api", "alice-linear", "alice-console", "namesake-slack",
		"unlinked-linear", "mallory-console", "ux-slack", "nobody-slack"} {
		add("default-"+s, s, "default")
	}
	add("deploy-alice-slack", "alice-slack", "deploy") // guarded: her approvers decide

	checkDeciders(t, st, sessions, []deciderCase{
		// Her API key in the console: the sessions of every identity of hers.
		{"alice's key", engine.ApprovalDecider{Guarded: []string{"deploy"}, StartedBy: "alice-key", Person: "alice"},
			[]string{"default-ux-slack", "default-alice-console", "default-alice-linear", "default-alice-api", "default-alice-slack"}},
		// In Slack, her own id also matches a session it started elsewhere
		// unlinked (the rule compares the id itself too).
		{"alice in Slack", engine.ApprovalDecider{Guarded: []string{"deploy"}, StartedBy: "UALICE", Person: "alice"},
			[]string{"default-ux-slack", "default-unlinked-linear", "default-alice-console", "default-alice-linear", "default-alice-api", "default-alice-slack"}},
		{"alice, approver of deploy", engine.ApprovalDecider{ApproverOf: []string{"deploy"}, Guarded: []string{"deploy"}, StartedBy: "lin-alice", Person: "alice"},
			[]string{"deploy-alice-slack", "default-ux-slack", "default-alice-console", "default-alice-linear", "default-alice-api", "default-alice-slack"}},
		{"the namesake", engine.ApprovalDecider{Guarded: []string{"deploy"}, StartedBy: "UALICE2", Person: "alice2"},
			[]string{"default-namesake-slack"}},
		{"mallory's key", engine.ApprovalDecider{Guarded: []string{"deploy"}, StartedBy: "mallory-key", Person: "mallory"},
			[]string{"default-mallory-console"}},
		{"unlinked key", engine.ApprovalDecider{Guarded: []string{"deploy"}, StartedBy: "stranger-key"}, nil},
	})
}
