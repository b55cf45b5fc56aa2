package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/store/storetest"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// expiredSession writes a session last active at at with n messages.
func expiredSession(t *testing.T, st *Store, id string, at time.Time, n int) {
	t.Helper()
	storetest.CreateSession(t, st, storetest.Session(id, at))
	var evs []engine.Event
	text := strings.Repeat("x", 2000) // fills pages, for Compact to free
	for i := range n {
		data, _ := json.Marshal(map[string]string{"text": text})
		evs = append(evs, engine.Event{ID: storetest.EventID(id, i), Type: engine.EventUserMessage, Data: data})
	}
	storetest.Commit(t, st, engine.Commit{SessionID: id, Now: at, Events: evs})
}

// withFreePages is a store whose file has the free pages of 200 deleted
// 2 KB events.
func withFreePages(t *testing.T) *Store {
	t.Helper()
	st := openTemp(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	expiredSession(t, st, "old", t0, 200)
	if _, err := st.PruneSessions(context.Background(), t0.Add(time.Hour), 1000); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLightTx_QueuedAndSynchronousRestored: queued turns true once another
// writer waits for the connection, the writer runs after the batch, and
// the connection is back to synchronous=FULL for it (the batch alone ran
// without waiting for the disk).
func TestLightTx_QueuedAndSynchronousRestored(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	wrote := make(chan error, 1)
	var sawNormal bool
	err := st.lightTx(ctx, func(tx *sql.Tx, queued func() bool) error {
		if queued() {
			t.Error("queued before any other writer")
		}
		var sync int
		if err := tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
			return err
		}
		sawNormal = sync == 1
		go func() {
			_, err := st.write.ExecContext(ctx, `PRAGMA user_version = 7`)
			wrote <- err
		}()
		for !queued() {
			// Waits for a condition (the writer queuing), not a time.
			select {
			case err := <-wrote:
				t.Fatalf("the other writer ran during the transaction: %v", err)
			default:
			}
			runtime.Gosched()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawNormal {
		t.Error("the batch ran with synchronous other than NORMAL")
	}
	if err := <-wrote; err != nil || pragma(t, st.write, "user_version") != "7" {
		t.Fatalf("the queued writer: %v", err)
	}
	if got := pragma(t, st.write, "synchronous"); got != "2" {
		t.Errorf("writer synchronous after lightTx = %s, want 2 (FULL) again", got)
	}
}

// TestPruneBatch_YieldsToAQueuedWriter: a batch ends after the piece in
// hand once a writer queues, keeps the session whose events are left for
// the next batch, and the next batches finish it.
func TestPruneBatch_YieldsToAQueuedWriter(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	expiredSession(t, st, "old", t0, 3*yieldRows)
	expiredSession(t, st, "old2", t0.Add(time.Hour), 2)
	cut := t0.Add(24 * time.Hour)

	calls := 0
	var got store.SessionsPruned
	err := st.lightTx(ctx, func(tx *sql.Tx, _ func() bool) error {
		var err error
		got, err = pruneBatch(ctx, tx, cut, 1000, func() bool { calls++; return calls >= 2 })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Events != 2*yieldRows || len(got.Sessions) != 0 {
		t.Errorf("yielding batch = %+v, want %d events and no session (the second look saw a writer)", got, 2*yieldRows)
	}
	if evs, _ := st.Events(ctx, "old", 0, 0); len(evs) != yieldRows {
		t.Errorf("old has %d events left, want %d", len(evs), yieldRows)
	}
	var total store.SessionsPruned
	for {
		b, err := st.PruneSessions(ctx, cut, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if b.Events == 0 && len(b.Sessions) == 0 {
			break
		}
		total.Events += b.Events
		total.Sessions = append(total.Sessions, b.Sessions...)
	}
	if total.Events != yieldRows+2 || strings.Join(total.Sessions, ",") != "old,old2" {
		t.Errorf("later batches = %+v, want the %d events left and both sessions", total, yieldRows+2)
	}
}

// TestCompact_FreesBoundedSteps: Compact frees at most pages pages a step
// and says how many; 0 frees the rest; then there is nothing to free.
func TestCompact_FreesBoundedSteps(t *testing.T) {
	ctx := context.Background()
	st := withFreePages(t)
	freed, ok, err := st.Compact(ctx, 8)
	if err != nil || !ok || freed != 8 {
		t.Fatalf("Compact(8) = %d, %v, %v; want 8 pages freed", freed, ok, err)
	}
	rest, ok, err := st.Compact(ctx, 0)
	if err != nil || !ok || rest < 50 {
		t.Fatalf("Compact(0) = %d, %v, %v; want the other pages of 200 2 KB events", rest, ok, err)
	}
	if n, _, err := st.Compact(ctx, 8); err != nil || n != 0 {
		t.Errorf("Compact on an empty free list = %d, %v; want 0", n, err)
	}
	if got := pragma(t, st.write, "synchronous"); got != "2" {
		t.Errorf("writer synchronous after Compact = %s, want 2", got)
	}
}

// TestVacuumStep_StopsForAQueuedWriter: a vacuum step ends at the page in
// hand once a writer queues, and what it freed stays freed.
func TestVacuumStep_StopsForAQueuedWriter(t *testing.T) {
	ctx := context.Background()
	st := withFreePages(t)
	free := func() int {
		n, _ := strconv.Atoi(pragma(t, st.write, "freelist_count"))
		return n
	}
	before := free()
	calls := 0
	var freed int
	err := st.lightTx(ctx, func(tx *sql.Tx, _ func() bool) error {
		var err error
		freed, err = vacuumStep(ctx, tx, 100, func() bool { calls++; return calls >= 5 })
		return err
	})
	if err != nil || freed != 5 {
		t.Fatalf("vacuumStep = %d, %v; want 5 pages (a writer queued at the fifth)", freed, err)
	}
	if got := free(); got != before-5 {
		t.Errorf("free pages = %d after the step, want %d", got, before-5)
	}
}

// TestDeleteSession_KeyByIndex: deleting a session finds its CreateSession
// key through an index (0024), not by scanning every key.
func TestDeleteSession_KeyByIndex(t *testing.T) {
	st := openTemp(t)
	if got := queryPlan(t, st.read, `DELETE FROM idempotency_keys WHERE scope = 'session' AND ref = ?`, "s1"); !strings.Contains(got, "INDEX idempotency_keys_ref") {
		t.Errorf("plan = %s; want the idempotency_keys_ref index", got)
	}
}

// TestPruneSessions_CheckpointsItsLog: a batch copies the log it wrote
// into the database file itself, so the next writer (a turn) starts the
// log from its beginning instead of paying for the batch's checkpoint.
// The writer's auto-checkpoint is off here: only the job's can do it.
func TestPruneSessions_CheckpointsItsLog(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	if _, err := st.write.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	expiredSession(t, st, "old", t0, 200)
	if _, err := st.read.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		t.Fatal(err)
	}
	b, err := st.PruneSessions(ctx, t0.Add(time.Hour), 1000)
	if err != nil || b.Events != 200 {
		t.Fatalf("PruneSessions = %+v, %v; want 200 events", b, err)
	}
	// A turn's small commit after the batch.
	storetest.CreateSession(t, st, storetest.Session("new", t0.Add(2*time.Hour)))
	var busy, logged, copied int
	if err := st.read.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logged, &copied); err != nil {
		t.Fatal(err)
	}
	if logged > 20 {
		t.Errorf("log after the batch and one small commit = %d frames, want a few (the batch's frames were checkpointed, the log restarted)", logged)
	}
}
