package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// claimAt claims key for owner at now for 30s and fails tb unless it is
// claimed.
func claimAt(tb testing.TB, st store.Store, key, owner string, now time.Time) {
	tb.Helper()
	ok, err := st.ClaimLease(context.Background(), key, owner, now, now.Add(30*time.Second))
	if err != nil || !ok {
		tb.Fatalf("ClaimLease(%s, %s) = %v, %v; want claimed", key, owner, ok, err)
	}
}

// eventCount is how many events the session's log holds.
func eventCount(tb testing.TB, st store.Store, id string) int {
	tb.Helper()
	evs, err := st.Events(context.Background(), id, 0, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return len(evs)
}

// testCommitFenced: a commit fenced by a lease its owner holds is written;
// one fenced by a lease another owner holds, took over, or nobody holds is
// refused with ErrFenced and writes nothing (no event, no session change,
// no input key, no approval, no result).
func testCommitFenced(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	lease := "session:s1"
	mine := &engine.Fence{Key: lease, Owner: "r1"}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

	refused := func(what string, f *engine.Fence) {
		t.Helper()
		before, err := st.Session(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		n := eventCount(t, st, "s1")
		called := false
		a := Approval("a-"+what, T0)
		_, err = st.Commit(ctx, engine.Commit{
			SessionID: "s1", Now: T0.Add(time.Hour), Fence: f, InputKey: "key-" + what,
			Update: func(s *engine.Session) error {
				called = true
				s.Status = engine.StatusRunning
				return nil
			},
			Events:      []engine.Event{userMessage("e-"+what, "fenced")},
			Result:      &engine.ResultRecord{CallID: "c-" + what, Data: []byte(`{"ok":true}`), ReportedAt: T0, TurnID: "t1"},
			NewApproval: &a,
		})
		if !errors.Is(err, engine.ErrFenced) {
			t.Fatalf("%s: commit = %v, want ErrFenced", what, err)
		}
		if called {
			t.Errorf("%s: Update ran for a fenced commit", what)
		}
		after, err := st.Session(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if after.Status != before.Status || after.LastSeq != before.LastSeq || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("%s: session changed by a fenced commit: %+v -> %+v", what, before, after)
		}
		if got := eventCount(t, st, "s1"); got != n {
			t.Errorf("%s: %d events after a fenced commit, want %d", what, got, n)
		}
		if _, err := st.Approval(ctx, a.ID); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s: the fenced commit's approval: %v, want not found", what, err)
		}
		if rs, err := st.Results(ctx, "s1"); err != nil || len(rs) != 0 {
			t.Errorf("%s: results after a fenced commit = %v, %v; want none", what, rs, err)
		}
		// The input key was not recorded: the same key commits later.
		res := Commit(t, st, engine.Commit{SessionID: "s1", InputKey: "key-" + what, Events: []engine.Event{userMessage("e2-"+what, "later")}})
		if res.Duplicate {
			t.Errorf("%s: a fenced commit recorded its input key", what)
		}
	}

	refused("nobody holds it", mine)

	claimAt(t, st, lease, "r1", t0)
	res, err := st.Commit(ctx, engine.Commit{SessionID: "s1", Now: T0, Fence: mine, Events: []engine.Event{userMessage("held", "mine")}})
	if err != nil || len(res.Events) != 1 {
		t.Fatalf("commit fenced by a held lease = %v, %v; want written", res, err)
	}
	refused("another owner holds it", &engine.Fence{Key: lease, Owner: "r2"})
	refused("another key", &engine.Fence{Key: "session:other", Owner: "r1"})

	// Expired but not claimed since: still r1's to write under.
	if _, err := st.Commit(ctx, engine.Commit{SessionID: "s1", Now: T0, Fence: mine, Events: []engine.Event{userMessage("expired", "late")}}); err != nil {
		t.Fatalf("commit fenced by an expired lease nobody took: %v", err)
	}
	// r2 takes it over once it expired: r1 is fenced off, r2 writes.
	claimAt(t, st, lease, "r2", t0.Add(time.Minute))
	refused("taken over", mine)
	if _, err := st.Commit(ctx, engine.Commit{SessionID: "s1", Now: T0, Fence: &engine.Fence{Key: lease, Owner: "r2"}, Events: []engine.Event{userMessage("r2", "takeover")}}); err != nil {
		t.Fatalf("commit fenced by the new owner: %v", err)
	}
	// Released: nobody's.
	if err := st.ReleaseLease(ctx, lease, "r2"); err != nil {
		t.Fatal(err)
	}
	refused("released", &engine.Fence{Key: lease, Owner: "r2"})

	// A fence without key or owner is a caller's bug.
	for _, f := range []*engine.Fence{{Key: lease}, {Owner: "r1"}} {
		if _, err := st.Commit(ctx, engine.Commit{SessionID: "s1", Now: T0, Fence: f}); !errors.Is(err, engine.ErrInvariant) {
			t.Errorf("commit with fence %+v = %v, want ErrInvariant", *f, err)
		}
	}
}

// testCommitApprovalFenced: CommitApproval honours its fence as Commit
// does: refused with ErrFenced, nothing written, unless the owner holds
// the lease.
func testCommitApprovalFenced(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	addApproval(t, st, "s1", Approval("a1", T0))
	lease := "apply:a1"
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

	commit := func(f *engine.Fence, by string) (engine.Approval, bool, error) {
		called := false
		a, _, err := st.CommitApproval(ctx, engine.ApprovalCommit{
			ID: "a1", Now: T0.Add(time.Minute), Fence: f,
			Update: func(a *engine.Approval) error {
				called = true
				return decide(by, T0.Add(time.Minute))(a)
			},
			Events: []engine.Event{{ID: "ev-" + by, Type: engine.EventApprovalDecided, Data: []byte(`{"approval_id":"a1"}`)}},
		})
		return a, called, err
	}
	refused := func(what string, f *engine.Fence) {
		t.Helper()
		before := getApproval(t, st, "a1")
		n := eventCount(t, st, "s1")
		_, called, err := commit(f, "U-"+what)
		if !errors.Is(err, engine.ErrFenced) {
			t.Fatalf("%s: CommitApproval = %v, want ErrFenced", what, err)
		}
		if called {
			t.Errorf("%s: Update ran for a fenced approval commit", what)
		}
		if after := getApproval(t, st, "a1"); after.Status != before.Status || after.DecidedBy != before.DecidedBy || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("%s: approval changed by a fenced commit: %+v -> %+v", what, before, after)
		}
		if got := eventCount(t, st, "s1"); got != n {
			t.Errorf("%s: %d events after a fenced approval commit, want %d", what, got, n)
		}
	}

	refused("nobody holds it", &engine.Fence{Key: lease, Owner: "r1"})
	claimAt(t, st, lease, "r1", t0)
	refused("another owner holds it", &engine.Fence{Key: lease, Owner: "r2"})
	claimAt(t, st, lease, "r2", t0.Add(time.Minute)) // r1's expired: taken over
	refused("taken over", &engine.Fence{Key: lease, Owner: "r1"})

	a, _, err := commit(&engine.Fence{Key: lease, Owner: "r2"}, "U2")
	if err != nil || a.Status != engine.ApprovalApproved || a.DecidedBy != "U2" {
		t.Fatalf("approval commit fenced by the holder = %+v, %v; want approved by U2", a, err)
	}
	if _, _, err := st.CommitApproval(ctx, engine.ApprovalCommit{ID: "a1", Now: T0, Fence: &engine.Fence{Owner: "r2"}}); !errors.Is(err, engine.ErrInvariant) {
		t.Errorf("approval commit with a fence without key = %v, want ErrInvariant", err)
	}
}

// testFenceTakeoverRace: commits fenced by r1 through one handle race a
// takeover by r2 through another, as a paused replica's commit in flight
// races the replica recovering its session. Once the claim returns, no
// commit of r1's lands: what the new owner reads right after its claim is
// final, and once one of r1's commits is refused none after it is written.
func testFenceTakeoverRace(t *testing.T, open func() store.Store) {
	a, b := open(), open()
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	const commits = 40
	for round := range 5 {
		id := EventID("s", round)
		CreateSession(t, a, Session(id, T0))
		lease := "session:" + id
		fence := &engine.Fence{Key: lease, Owner: "r1"}
		claimAt(t, a, lease, "r1", t0)

		started := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			refused := false
			for i := range commits {
				_, err := a.Commit(ctx, engine.Commit{
					SessionID: id, Now: T0, Fence: fence,
					Events: []engine.Event{{ID: EventID(id+"-e", i), Type: engine.EventAgentMessage, Data: []byte(`{"text":"x"}`)}},
				})
				if i == 0 {
					close(started)
				}
				switch {
				case errors.Is(err, engine.ErrFenced):
					refused = true
				case err != nil:
					t.Errorf("round %d: commit %d: %v", round, i, err)
					return
				case refused:
					t.Errorf("round %d: commit %d was written after an earlier one was fenced", round, i)
				}
			}
		}()
		<-started
		claimAt(t, b, lease, "r2", t0.Add(time.Minute))
		seen := eventCount(t, b, id)
		wg.Wait()
		if _, err := a.Commit(ctx, engine.Commit{SessionID: id, Now: T0, Fence: fence}); !errors.Is(err, engine.ErrFenced) {
			t.Fatalf("round %d: r1's commit after the takeover = %v, want ErrFenced", round, err)
		}
		if got := eventCount(t, b, id); got != seen {
			t.Fatalf("round %d: %d events after r2's claim read %d: r1 wrote after the takeover", round, got, seen)
		}
	}
}
