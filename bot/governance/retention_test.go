package governance_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/bot/audit"
	"brain/bot/filestore"
	"brain/bot/governance"
	"brain/engine"
	"brain/store"
	"brain/store/storetest"
)

// TestRetention_SessionsFilesAuditCut: idle sessions go batch by batch,
// each batch audited by counts and ids; old files go; the audit trail's
// pruned start is recorded as a cut and signed, and the whole chain and
// its seals still verify. A second replica's run, while the first holds
// the lease, deletes nothing from the database.
func TestRetention_SessionsFilesAuditCut(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	now := t0.Add(100 * 24 * time.Hour)
	clock := func() time.Time { return now }
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	trail := &audit.Recorder{Store: st, Now: clock}
	for i := range 10 {
		if _, err := st.AppendAudit(ctx, store.AuditRecord{At: t0.Add(time.Duration(i) * time.Hour), Actor: "U1", Action: audit.ActionSignedIn, Target: "console"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := audit.SealHead(ctx, st, key, t0.Add(11*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"a", "b", "c"} {
		at := t0.Add(time.Duration(i) * time.Hour)
		if id == "c" {
			at = now.Add(-time.Hour) // active recently
		}
		s := storetest.Session(id, at)
		storetest.CreateSession(t, st, s)
		var evs []engine.Event
		for j := range 5 {
			evs = append(evs, engine.Event{ID: storetest.EventID(id, j), Type: engine.EventUserMessage, Data: json.RawMessage(`{"text":"hello"}`)})
		}
		storetest.Commit(t, st, engine.Commit{SessionID: id, Now: at, Events: evs})
	}
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"), 1<<20, clock)
	if err != nil {
		t.Fatal(err)
	}
	oldHash, _ := files.Put([]byte("old file"))
	newHash, _ := files.Put([]byte("new file"))
	if err := os.Chtimes(filepath.Join(filesDir(files, t), oldHash[:2], oldHash), t0, t0); err != nil {
		t.Fatal(err)
	}

	newJob := func(owner string) *governance.Retention {
		return &governance.Retention{Store: st, Leases: st, Owner: owner, Files: files, Sessions: 30 * 24 * time.Hour,
			FilesKept: 30 * 24 * time.Hour, Audit: 30 * 24 * time.Hour, Every: time.Hour, Batch: 4, Trail: trail, Now: clock,
			Seal: func(ctx context.Context) error { _, err := audit.SealHead(ctx, st, key, clock()); return err }}
	}
	if err := newJob("rep_1").RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := st.Session(ctx, id); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("session %s kept: %v", id, err)
		}
	}
	if evs, err := st.Events(ctx, "c", 0, 0); err != nil || len(evs) != 5 {
		t.Errorf("recent session c: %d events, %v", len(evs), err)
	}
	if _, err := files.Get(oldHash); !errors.Is(err, filestore.ErrNotFound) {
		t.Errorf("old file kept: %v", err)
	}
	if _, err := files.Get(newHash); err != nil {
		t.Errorf("new file: %v", err)
	}

	es, err := st.AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var entries, batches, events int
	var summary store.AuditEntry
	for _, e := range es {
		if e.Action == audit.ActionDeleted && e.Target == "sessions" {
			entries++
			var d struct{ Batches, Events int }
			_ = json.Unmarshal(e.Detail, &d)
			batches += d.Batches
			events += d.Events
			if strings.Contains(string(e.Detail), "hello") {
				t.Errorf("batch entry holds content: %s", e.Detail)
			}
		}
		if e.Action == audit.ActionDeleted && e.Target == "retention" {
			summary = e
		}
	}
	// 10 events in batches of 4: three batches, the first recorded at
	// once, the other two together at the end.
	if entries != 2 || batches != 3 || events != 10 {
		t.Errorf("session deletions audited in %d entries, %d batches (%d events); want 2 entries, 3 batches (10)", entries, batches, events)
	}
	if !strings.Contains(string(summary.Detail), `"audit_cut_seq":11`) || !strings.Contains(string(summary.Detail), `"files":1`) {
		t.Errorf("retention entry = %s; want the cut after the sealed entry 11 and 1 file", summary.Detail)
	}
	if last := es[len(es)-1]; last.Action != audit.ActionSealed || last.Seq != summary.Seq+1 {
		t.Errorf("last entry = %+v; want a seal of the cut", last)
	}
	rep, err := audit.VerifyStore(ctx, st, key.Public().(ed25519.PublicKey))
	if err != nil || rep.Break != nil || rep.CutAt != summary.Seq || rep.Checked != 1 {
		t.Errorf("verify after retention: %s (%+v), %v; want ok from the recorded cut, the new seal checked", rep.Describe(), rep, err)
	}

	// Another replica while rep_1 holds the lease: nothing more goes.
	s := storetest.Session("d", t0)
	storetest.CreateSession(t, st, s)
	if err := newJob("rep_2").RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, "d"); err != nil {
		t.Errorf("replica without the lease pruned: %v", err)
	}
	if err := newJob("rep_1").RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, "d"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("lease holder did not prune d: %v", err)
	}
}

// filesDir is where files keeps its content (a Put's path).
func filesDir(files *filestore.Store, t *testing.T) string {
	t.Helper()
	return files.Dir()
}
