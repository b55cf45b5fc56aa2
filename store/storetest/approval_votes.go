package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// errVoted is the test's "this person already approved" refusal.
var errVoted = errors.New("already voted")

// vote is the Update of an N-person approval as the engine writes it: the
// person's approval is added unless they already gave one; the N-th turns
// the approval to applying with its decision id. A deny ends it.
func vote(by string, approve bool, at time.Time) func(a *engine.Approval) error {
	return func(a *engine.Approval) error {
		if a.Status != engine.ApprovalPending {
			return errDecided
		}
		if !approve {
			a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt, a.Comment = engine.ApprovalDenied, "dec-"+by, by, at, "no: "+by
			return nil
		}
		if a.VotedBy(by) {
			return errVoted
		}
		a.Votes = append(a.Votes, engine.Vote{By: by, At: at, Comment: "ok from " + by})
		if len(a.Votes) >= a.Needed() {
			a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt, a.Attempts = engine.ApprovalApplying, "dec-"+by, by, at, 1
		}
		return nil
	}
}

// voteEvents is the Emit of an N-person approval: a vote event while it
// stays pending, the decision event on the last vote.
func voteEvents(id string) func(a engine.Approval) ([]engine.Event, error) {
	return func(a engine.Approval) ([]engine.Event, error) {
		if a.Status == engine.ApprovalPending {
			return []engine.Event{{ID: fmt.Sprintf("%s-vote-%d", id, len(a.Votes)), Type: engine.EventApprovalVoted}}, nil
		}
		return []engine.Event{{ID: id + "-decided", Type: engine.EventApprovalDecided}}, nil
	}
}

func testApprovalTeamFieldsRoundTrip(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	a := Approval("a1", T0)
	a.Policy, a.Required, a.ForbidSelf = "two-for-prs", 2, true
	addApproval(t, st, "s1", a)
	a = getApproval(t, st, "a1")
	if a.Policy != "two-for-prs" || a.Required != 2 || !a.ForbidSelf || a.Votes != nil || a.Comment != "" || !a.RemindedAt.IsZero() {
		t.Fatalf("new approval %+v; want its policy fields as inserted", a)
	}

	at := T0.Add(time.Minute).UTC() // as stores read times back
	got, _, err := st.CommitApproval(ctx, engine.ApprovalCommit{ID: "a1", Now: at, Update: func(a *engine.Approval) error {
		a.Votes = []engine.Vote{{By: "U1", At: at, Comment: "looks right — «ok»"}}
		a.Comment = "the reason"
		a.RemindedAt = at
		// What was proposed, and how it is decided, never changes.
		a.Policy, a.Required, a.ForbidSelf = "other", 9, false
		return nil
	}})
	if err != nil {
		t.Fatalf("CommitApproval: %v", err)
	}
	want := a
	want.Votes = []engine.Vote{{By: "U1", At: at, Comment: "looks right — «ok»"}}
	want.Comment, want.RemindedAt, want.UpdatedAt = "the reason", at, at
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after commit\n got %+v\nwant %+v", got, want)
	}
	// A second handle (another process, or the next start) reads the same.
	if again := getApproval(t, open(), "a1"); !reflect.DeepEqual(again, want) {
		t.Errorf("read from another handle\n got %+v\nwant %+v", again, want)
	}
}

func testCommitApprovalEmit(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	addApproval(t, st, "s1", Approval("a1", T0))

	var seen engine.Approval
	_, evs, err := st.CommitApproval(ctx, engine.ApprovalCommit{
		ID: "a1", Now: T0.Add(time.Minute),
		Update: func(a *engine.Approval) error { a.Comment = "set by update"; return nil },
		Events: []engine.Event{{ID: "first", Type: engine.EventApprovalDecided}},
		Emit: func(a engine.Approval) ([]engine.Event, error) {
			seen = a
			return []engine.Event{{ID: "emitted", Type: engine.EventApprovalDecided}}, nil
		},
	})
	if err != nil {
		t.Fatalf("CommitApproval: %v", err)
	}
	if seen.Comment != "set by update" {
		t.Errorf("Emit saw comment %q, want the row as Update left it", seen.Comment)
	}
	if want := []string{"first", "emitted"}; !slices.Equal(ids(evs), want) {
		t.Errorf("events = %v, want %v", ids(evs), want)
	}

	// An Emit error aborts the commit: nothing of Update is written.
	boom := errors.New("boom")
	_, _, err = st.CommitApproval(ctx, engine.ApprovalCommit{
		ID: "a1", Now: T0.Add(2 * time.Minute),
		Update: func(a *engine.Approval) error { a.Comment = "not kept"; return nil },
		Emit:   func(engine.Approval) ([]engine.Event, error) { return nil, boom },
	})
	if !errors.Is(err, boom) {
		t.Fatalf("CommitApproval with failing Emit = %v, want boom", err)
	}
	if got := getApproval(t, st, "a1"); got.Comment != "set by update" {
		t.Errorf("comment after failed Emit = %q, want the earlier one", got.Comment)
	}
}

// testApprovalVotesRace: a require-2 approval, 20 concurrent clicks from 3
// people over two handles. Each person counts once, the approval turns
// applying exactly once (on the second distinct person) and the log holds
// one vote event and one decision.
func testApprovalVotesRace(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	st := stores[0]
	CreateSession(t, st, Session("s1", T0))
	a := Approval("a1", T0)
	a.Required = 2
	addApproval(t, st, "s1", a)

	const n = 20
	people := []string{"U1", "U2", "U3"}
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		errs    = make([]error, n)
		results = make([]engine.Approval, n)
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], _, errs[i] = stores[i%2].CommitApproval(ctx, engine.ApprovalCommit{
				ID: "a1", Now: T0.Add(time.Minute),
				Update: vote(people[i%len(people)], true, T0.Add(time.Minute)),
				Emit:   voteEvents("a1"),
			})
		}()
	}
	close(start)
	wg.Wait()

	applying := 0
	for i, err := range errs {
		switch {
		case err == nil && results[i].Status == engine.ApprovalApplying:
			applying++
		case err == nil, errors.Is(err, errVoted), errors.Is(err, errDecided):
		default:
			t.Errorf("CommitApproval %d: %v", i, err)
		}
	}
	if applying != 1 {
		t.Fatalf("%d commits turned the approval applying, want exactly 1", applying)
	}
	got := getApproval(t, open(), "a1")
	if got.Status != engine.ApprovalApplying || len(got.Votes) != 2 || got.Votes[0].By == got.Votes[1].By {
		t.Fatalf("stored approval: status %s votes %+v; want applying with two distinct people", got.Status, got.Votes)
	}
	if got.DecidedBy != got.Votes[1].By || got.Attempts != 1 {
		t.Errorf("decided by %q attempts %d; want the second voter %q and 1", got.DecidedBy, got.Attempts, got.Votes[1].By)
	}
	evs, err := st.Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if want := []string{"req-a1", "a1-vote-1", "a1-decided"}; !slices.Equal(ids(evs), want) {
		t.Errorf("events = %v, want %v", ids(evs), want)
	}
}

// testApprovalVoteThenDeny: one approval of two, then a deny, ends it; the
// recorded vote stays for the audit and no further vote counts.
func testApprovalVoteThenDeny(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	a := Approval("a1", T0)
	a.Required = 2
	addApproval(t, st, "s1", a)
	at := T0.Add(time.Minute)
	commit := func(by string, approve bool) (engine.Approval, error) {
		got, _, err := st.CommitApproval(ctx, engine.ApprovalCommit{ID: "a1", Now: at, Update: vote(by, approve, at), Emit: voteEvents("a1")})
		return got, err
	}
	if got, err := commit("U1", true); err != nil || got.Status != engine.ApprovalPending || len(got.Votes) != 1 {
		t.Fatalf("first approval: %+v, %v; want pending with one vote", got, err)
	}
	if _, err := commit("U1", true); !errors.Is(err, errVoted) {
		t.Fatalf("same person again: %v, want errVoted", err)
	}
	got, err := commit("U2", false)
	if err != nil || got.Status != engine.ApprovalDenied || got.DecidedBy != "U2" || got.Comment != "no: U2" {
		t.Fatalf("deny: %+v, %v; want denied by U2 with its reason", got, err)
	}
	if _, err := commit("U3", true); !errors.Is(err, errDecided) {
		t.Fatalf("approval after the deny: %v, want errDecided", err)
	}
	if got := getApproval(t, open(), "a1"); got.Status != engine.ApprovalDenied || len(got.Votes) != 1 {
		t.Errorf("stored: %s with %d votes, want denied keeping the one vote", got.Status, len(got.Votes))
	}
}
