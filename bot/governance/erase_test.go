package governance_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/bot/audit"
	"brain/bot/filestore"
	"brain/bot/governance"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
	"brain/store/storetest"
)

// Alice's and Bob's words: none of Alice's may survive her erasure, all
// of Bob's must.
var (
	aliceWords = append([]string{"alice-inbox-words"}, storetest.AliceWritten...)
	bobWords   = append([]string{"bob-inbox-words"}, storetest.BobWritten...)
)

// TestErase_NoTraceInAnyTable: a session with Alice's and Bob's messages,
// files, memory, inbox deliveries and Alice's connection; erasing Alice
// leaves none of her words in any table of SQLite (the file's own bytes
// included) or PostgreSQL, keeps every one of Bob's, keeps the log's
// events, deletes her file, and records the erasure.
func TestErase_NoTraceInAnyTable(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "brain.db")
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		eraseScenario(t, st)
		checkDump(t, storetest.DumpSQLite(t, path))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.NewDatabase(t)
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		eraseScenario(t, st)
		checkDump(t, storetest.DumpPostgres(t, dsn))
	})
}

func eraseScenario(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	now := t0
	clock := func() time.Time { return now }
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"), 1<<20, clock)
	if err != nil {
		t.Fatal(err)
	}
	aliceFile, _ := files.Put([]byte("alice's attached file"))
	bobFile, _ := files.Put([]byte("bob's attached file"))
	storetest.SeedErasure(t, st, now, aliceFile, bobFile)
	const thread = "slack:T1:C1:1.0" // the shared session's
	recorded, err := st.RecordInbound(ctx, now, []store.Inbound{
		{Source: "slack", ThreadKey: thread, Kind: "event", Payload: []byte(`{"event":{"user":"UALICE","text":"alice-inbox-words"}}`), DedupeKeys: []string{"Ev1"}},
		{Source: "slack", ThreadKey: thread, Kind: "event", Payload: []byte(`{"event":{"user":"UBOB","text":"bob-inbox-words"}}`), DedupeKeys: []string{"Ev2"}},
	})
	if err != nil || len(recorded) != 2 {
		t.Fatal(recorded, err)
	}
	items, err := st.PendingInbound(ctx, "slack", 10)
	if err != nil || len(items) != 2 {
		t.Fatal(items, err)
	}
	if err := st.FinishInbound(ctx, now, []store.Finished{{ID: items[0].ID}}); err != nil { // Alice's worked; Bob's pending
		t.Fatal(err)
	}

	e := &governance.Eraser{Store: st, Files: files, Trail: &audit.Recorder{Store: st, Now: clock}, Now: clock}
	got, err := e.Erase(ctx, "ops", "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := store.PersonErased{Person: "alice", Identities: 1, Sessions: 1, Messages: 2, Files: 1, Memory: 1}
	if got != want {
		t.Errorf("Erase = %+v, want %+v", got, want)
	}
	if _, err := files.Get(aliceFile); err == nil {
		t.Error("Alice's file is still stored")
	}
	if _, err := files.Get(bobFile); err != nil {
		t.Errorf("Bob's file: %v", err)
	}
	evs, err := st.Events(ctx, "shared", 0, 0)
	if err != nil || len(evs) != 4 || !strings.Contains(string(evs[0].Data), governance.ErasedMarker) {
		t.Fatalf("events after erasure = %d, %v; want all 4, Alice's marked", len(evs), err)
	}
	es, err := st.AuditEntries(ctx, store.AuditQuery{})
	if err != nil || len(es) != 1 || es[0].Action != audit.ActionErased || es[0].Actor != "ops" || es[0].Target != "person:alice" {
		t.Errorf("audit = %+v, %v; want the erasure by ops", es, err)
	}
	if _, err := st.Person(ctx, "alice"); err == nil {
		t.Error("Alice is still a person")
	}
}

func checkDump(t *testing.T, dump storetest.Dumped) {
	t.Helper()
	if !strings.Contains(dump.Rows, "events") {
		t.Fatalf("the dump has no events table:\n%s", dump.Rows)
	}
	for _, w := range aliceWords {
		if dump.Holds(w) {
			t.Errorf("Alice's %q survives in the dump (its rows or the database's files)", w)
		}
	}
	for _, w := range bobWords {
		if !dump.Holds(w) {
			t.Errorf("Bob's %q is gone", w)
		}
	}
}
