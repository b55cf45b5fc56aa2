package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// testApprovalsDecider: the decider filter keeps exactly the pending
// approvals engine.ApprovalDecider.Matches keeps, and the limit applies
// after it, so a person's approvals are found however many others wait.
func testApprovalsDecider(t *testing.T, open func() store.Store) {
	st := open()
	sessions := map[string]engine.Session{}
	for _, s := range []struct {
		id, by string
		origin engine.Origin
	}{
		{"alice-slack", "alice", engine.OriginSlack},
		{"bob-slack", "bob", engine.OriginSlack},
		{"bob-api", "bob", engine.OriginAPI},
		{"nobody-console", "", engine.OriginConsole},
	} {
		ss := Session(s.id, T0)
		ss.StartedBy, ss.Origin = s.by, s.origin
		CreateSession(t, st, ss)
		sessions[s.id] = ss
	}
	// "deploy" and "infra" have approvers; "default" and "gone" do not.
	minute := 0
	add := func(id, session, agent string, status engine.ApprovalStatus) {
		a := Approval(id, T0.Add(time.Duration(minute)*time.Minute))
		minute++
		a.Agent, a.Status = agent, status
		addApproval(t, st, session, a)
	}
	add("deploy-in-bob", "bob-slack", "deploy", engine.ApprovalPending)
	add("infra-in-alice", "alice-slack", "infra", engine.ApprovalPending)
	add("default-in-alice", "alice-slack", "default", engine.ApprovalPending)
	add("default-in-bob", "bob-slack", "default", engine.ApprovalPending)
	add("gone-in-alice", "alice-slack", "gone", engine.ApprovalPending)
	add("default-in-bob-api", "bob-api", "default", engine.ApprovalPending)
	add("deploy-in-console", "nobody-console", "deploy", engine.ApprovalPending)
	add("default-in-alice-applied", "alice-slack", "default", engine.ApprovalApplied)
	var noise []string
	for i := range 30 { // others' approvals, newer than every one above
		id := fmt.Sprintf("noise-%02d", i)
		add(id, "bob-slack", "default", engine.ApprovalPending)
		noise = append([]string{id}, noise...)
	}

	checkDeciders(t, st, sessions, []deciderCase{
		{"approver of deploy, starter of alice's", engine.ApprovalDecider{ApproverOf: []string{"deploy"}, Guarded: []string{"deploy", "infra"}, StartedBy: "alice"},
			[]string{"deploy-in-console", "gone-in-alice", "default-in-alice", "deploy-in-bob"}},
		{"starter only", engine.ApprovalDecider{Guarded: []string{"deploy", "infra"}, StartedBy: "alice"},
			[]string{"gone-in-alice", "default-in-alice"}},
		{"no guarded agents", engine.ApprovalDecider{StartedBy: "bob"},
			append(noise, "default-in-bob-api", "default-in-bob", "deploy-in-bob")},
		{"via API", engine.ApprovalDecider{Guarded: []string{"deploy", "infra"}, StartedBy: "carol", Origins: []engine.Origin{engine.OriginAPI, engine.OriginConsole}},
			[]string{"deploy-in-console", "default-in-bob-api"}},
		{"nobody", engine.ApprovalDecider{Guarded: []string{"deploy"}}, nil},
	})
}

// deciderCase is a decider filter and the pending approvals it keeps,
// newest first.
type deciderCase struct {
	name string
	d    engine.ApprovalDecider
	want []string
}

// checkDeciders checks each case: Matches, the rule's statement in Go,
// keeps want of every pending approval; the store's filter finds the
// same; and the limit applies after the filter.
func checkDeciders(t *testing.T, st store.Store, sessions map[string]engine.Session, cases []deciderCase) {
	t.Helper()
	ctx := context.Background()
	pending := []engine.ApprovalStatus{engine.ApprovalPending}
	every, err := st.Approvals(ctx, engine.ApprovalFilter{Statuses: pending})
	if err != nil {
		t.Fatal(err)
	}
	starters := map[string]string{}
	for id, s := range sessions {
		starters[id] = starterPerson(t, st, s)
	}
	for _, dc := range cases {
		t.Run(dc.name, func(t *testing.T) {
			var want []string
			for _, a := range every {
				if dc.d.Matches(a, sessions[a.SessionID], starters[a.SessionID]) {
					want = append(want, a.ID)
				}
			}
			if !slices.Equal(want, dc.want) {
				t.Fatalf("Matches keeps %v, want %v", want, dc.want)
			}
			got, err := st.Approvals(ctx, engine.ApprovalFilter{Statuses: pending, Decider: &dc.d})
			if err != nil {
				t.Fatalf("Approvals: %v", err)
			}
			if ids := approvalIDs(got); !slices.Equal(ids, want) {
				t.Errorf("Approvals = %v, want %v", ids, want)
			}
			if len(want) < 2 {
				return
			}
			got, err = st.Approvals(ctx, engine.ApprovalFilter{Statuses: pending, Decider: &dc.d, Limit: 2})
			if ids := approvalIDs(got); err != nil || !slices.Equal(ids, want[:2]) {
				t.Errorf("with limit 2: %v, %v; want %v", ids, err, want[:2])
			}
		})
	}
}

// starterPerson is the person who started s, looked up as the engine
// does (engine.StarterSurfaces), "" for nobody.
func starterPerson(t *testing.T, st store.Store, s engine.Session) string {
	t.Helper()
	if s.StartedBy == "" {
		return ""
	}
	for _, surface := range engine.StarterSurfaces(s.Origin) {
		p, err := st.PersonByIdentity(context.Background(), store.Identity{Surface: surface, ExternalID: s.StartedBy})
		switch {
		case errors.Is(err, engine.ErrNotFound):
			continue
		case err != nil:
			t.Fatalf("PersonByIdentity(%s:%s): %v", surface, s.StartedBy, err)
		}
		return p.ID
	}
	return ""
}
