package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/storetest"
)

// TestStore_Columns pins what the tables hold: event data is the caller's
// bytes (not jsonb, which would reorder keys and drop spaces), times are
// the fixed-width UTC text with nanoseconds, and an undecided approval has
// no decided_at.
func TestStore_Columns(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	st := openAt(t, dsn)
	storetest.CreateSession(t, st, storetest.Session("s1", storetest.T0))
	a := storetest.Approval("a1", storetest.T0)
	data := json.RawMessage(`{"z": 1,  "a":[true ,null]}`)
	storetest.Commit(t, st, engine.Commit{SessionID: "s1", NewApproval: &a,
		Events: []engine.Event{{ID: "e1", Type: engine.EventToolResult, Data: data}}})

	conn := rawConn(t, dsn)
	var stored, created string
	if err := conn.QueryRow(ctx, `SELECT data, created_at FROM events WHERE id = 'e1'`).Scan(&stored, &created); err != nil {
		t.Fatal(err)
	}
	if stored != string(data) {
		t.Errorf("data column = %q, want the bytes committed, %q", stored, data)
	}
	if want := "2025-03-14T14:09:26.535897932Z"; created != want {
		t.Errorf("created_at column = %q, want %q", created, want)
	}
	var decidedNull bool
	if err := conn.QueryRow(ctx, `SELECT decided_at IS NULL FROM approvals WHERE id = 'a1'`).Scan(&decidedNull); err != nil {
		t.Fatal(err)
	}
	if !decidedNull {
		t.Error("decided_at of an undecided approval is not NULL")
	}
	// The text reads as a time in SQL, for operators.
	var asTime bool
	if err := conn.QueryRow(ctx, `SELECT created_at::timestamptz = '2025-03-14 14:09:26.535898+00' FROM events WHERE id = 'e1'`).Scan(&asTime); err != nil {
		t.Fatal(err)
	}
	if !asTime {
		t.Error("created_at::timestamptz is not the commit time")
	}
}

// TestStore_ConcurrentCommitsAcrossHandles: commits to one session from two
// handles (two processes) at once get consecutive, distinct seqs, and each
// commit's events stay together in its order.
func TestStore_ConcurrentCommitsAcrossHandles(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	stores := [2]*postgres.Store{openAt(t, dsn), openAt(t, dsn)}
	storetest.CreateSession(t, stores[0], storetest.Session("s1", storetest.T0))

	const writers, commits = 8, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range commits {
				id := fmt.Sprintf("w%d-c%02d", w, c)
				res, err := stores[w%2].Commit(ctx, engine.Commit{SessionID: "s1", Now: storetest.T0,
					Events: []engine.Event{{ID: id + "-a", Type: engine.EventUserMessage, Data: json.RawMessage(`{"text":"x"}`)}, {ID: id + "-b", Type: engine.EventTurnStarted}}})
				if err != nil {
					t.Errorf("Commit %s: %v", id, err)
					return
				}
				if res.Events[1].Seq != res.Events[0].Seq+1 {
					t.Errorf("Commit %s seqs %d, %d: not consecutive", id, res.Events[0].Seq, res.Events[1].Seq)
				}
			}
		}()
	}
	wg.Wait()

	evs, err := stores[1].Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2*writers*commits {
		t.Fatalf("%d events, want %d", len(evs), 2*writers*commits)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d", i, ev.Seq, i+1)
		}
		if i%2 == 1 && ev.ID != evs[i-1].ID[:len(evs[i-1].ID)-1]+"b" {
			t.Errorf("seq %d is %s, want the rest of %s's commit", ev.Seq, ev.ID, evs[i-1].ID)
		}
	}
	s, err := stores[1].Session(ctx, "s1")
	if err != nil || s.LastSeq != int64(len(evs)) {
		t.Errorf("session LastSeq = %d, %v; want %d", s.LastSeq, err, len(evs))
	}
}

// TestStore_CreateSessionSameThreadAcrossHandles: calls with different
// idempotency keys for one thread, over two handles, bind it once.
func TestStore_CreateSessionSameThreadAcrossHandles(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	stores := [2]*postgres.Store{openAt(t, dsn), openAt(t, dsn)}
	const n = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     = map[string]bool{}
		created int
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := storetest.Session(fmt.Sprintf("s%02d", i), storetest.T0)
			s.ThreadKey = "slack:T:C:1"
			got, ok, err := stores[i%2].CreateSession(ctx, s, fmt.Sprintf("key-%02d", i))
			if err != nil {
				t.Errorf("CreateSession %d: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[got.ID] = true
			if ok {
				created++
			}
		}()
	}
	wg.Wait()
	if created != 1 || len(ids) != 1 {
		t.Fatalf("created %d sessions, returned ids %v; want 1 and one id", created, ids)
	}
	// Only the winner's key was recorded: the others may still be used.
	var winner string
	for id := range ids {
		winner = id
	}
	for i := range n {
		key := fmt.Sprintf("key-%02d", i)
		got, err := stores[0].SessionByKey(ctx, key)
		if fmt.Sprintf("s%02d", i) == winner {
			if err != nil || got.ID != winner {
				t.Errorf("SessionByKey(%s) = %s, %v; want %s", key, got.ID, err, winner)
			}
		} else if !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("SessionByKey(%s) = %s, %v; want not found", key, got.ID, err)
		}
	}
}

// TestStore_InboundOppositeOrders: two handles record the same events in
// opposite orders at once. Claiming keys in batch order would deadlock
// (PostgreSQL aborts one batch); every event is recorded exactly once and
// no call fails.
func TestStore_InboundOppositeOrders(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	stores := [2]*postgres.Store{openAt(t, dsn), openAt(t, dsn)}
	item := func(key string) store.Inbound {
		return store.Inbound{Source: "slack", ThreadKey: "t", Kind: "message", Payload: []byte(key), DedupeKeys: []string{key}}
	}
	const rounds, size = 30, 6
	for r := range rounds {
		batch := make([]store.Inbound, size)
		for i := range batch {
			batch[i] = item(fmt.Sprintf("r%02d-%d", r, i))
		}
		reversed := make([]store.Inbound, size)
		for i := range batch {
			reversed[size-1-i] = batch[i]
		}
		var wg sync.WaitGroup
		dups := [2][]bool{}
		for h, b := range [][]store.Inbound{batch, reversed} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if dups[h], err = stores[h].RecordInbound(ctx, storetest.T0, b); err != nil {
					t.Errorf("round %d, handle %d: RecordInbound: %v", r, h, err)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for i := range size {
			fresh := 0
			if !dups[0][i] {
				fresh++
			}
			if !dups[1][size-1-i] {
				fresh++
			}
			if fresh != 1 {
				t.Fatalf("round %d item %d recorded %d times, want 1", r, i, fresh)
			}
		}
	}
	// A negative limit is all of them, as in SQLite.
	pending, err := stores[0].PendingInbound(ctx, "slack", -1)
	if err != nil || len(pending) != rounds*size {
		t.Fatalf("pending = %d items, %v; want %d", len(pending), err, rounds*size)
	}
}

// TestStore_RejectsTextPostgresCannotStore: text columns take valid UTF-8
// only; event data that is JSON but not UTF-8 is refused as a broken
// contract before anything is written.
func TestStore_RejectsTextPostgresCannotStore(t *testing.T) {
	ctx := context.Background()
	st := openAt(t, pgtest.NewDatabase(t))
	storetest.CreateSession(t, st, storetest.Session("s1", storetest.T0))
	_, err := st.Commit(ctx, engine.Commit{SessionID: "s1", Now: storetest.T0,
		Events: []engine.Event{{ID: "e1", Type: engine.EventToolResult, Data: json.RawMessage("{\"x\":\"\xff\"}")}}})
	if !errors.Is(err, engine.ErrInvariant) {
		t.Fatalf("Commit with non-UTF-8 data = %v, want ErrInvariant", err)
	}
	// Where the store does not check first, PostgreSQL's refusal is
	// translated the same way.
	_, _, err = st.CreateSession(ctx, storetest.Session("s\x00", storetest.T0), "")
	if !errors.Is(err, engine.ErrInvariant) {
		t.Errorf("CreateSession with a NUL byte in its id = %v, want ErrInvariant", err)
	}
	if s, err := st.Session(ctx, "s1"); err != nil || s.LastSeq != 0 {
		t.Errorf("session after refused commits: LastSeq %d, %v; want 0", s.LastSeq, err)
	}
}

// TestStore_DeleteSessionKeyByIndex: deleting a session finds its
// CreateSession key through an index (0024), not by scanning every key.
func TestStore_DeleteSessionKeyByIndex(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	openAt(t, dsn) // migrates
	if got := pgtest.QueryPlan(t, dsn, `DELETE FROM idempotency_keys WHERE scope = 'session' AND ref = 's1'`); !strings.Contains(got, "idempotency_keys_ref") {
		t.Errorf("plan:\n%s\nwant the idempotency_keys_ref index", got)
	}
}
