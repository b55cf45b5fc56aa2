package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/storetest"
)

// rowsOf is a postgres.RowSource over fixed rows.
type rowsOf struct {
	rows [][]any
	i    int
}

func (r *rowsOf) Next() bool             { r.i++; return r.i <= len(r.rows) }
func (r *rowsOf) Values() ([]any, error) { return r.rows[r.i-1], nil }
func (r *rowsOf) Err() error             { return nil }

const ts = "2025-03-14T14:09:26.535897932Z"

func sessionRow(id string) []any {
	return []any{id, "a", "api", "", false, "", "idle", ts, ts, int64(0), int64(0), int64(0), int64(0), nil, nil}
}

var sessionCols = []string{"id", "agent", "origin", "thread_key", "interactive", "started_by", "status",
	"created_at", "updated_at", "last_seq", "input_cursor", "checkpoint", "last_input_seq", "question", "result"}

var inboxCols = []string{"id", "source", "thread_key", "kind", "payload", "status", "error", "attempts", "created_at", "done_at"}

func TestTables_Schema(t *testing.T) {
	st := openAt(t, pgtest.NewDatabase(t))
	tables, err := st.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]postgres.Table{}
	for _, tb := range tables {
		byName[tb.Name] = tb
	}
	if _, ok := byName["schema_migrations"]; ok {
		t.Error("Tables lists schema_migrations")
	}
	inbox, ok := byName["inbox"]
	if !ok {
		t.Fatalf("no inbox table in %v", tables)
	}
	want := map[string]postgres.Column{
		"id":       {Name: "id", Type: "bigint", Identity: true},
		"payload":  {Name: "payload", Type: "bytea"},
		"done_at":  {Name: "done_at", Type: "text", Domain: "utc_time", Nullable: true},
		"attempts": {Name: "attempts", Type: "integer"},
	}
	for _, c := range inbox.Columns {
		if w, ok := want[c.Name]; ok && c != w {
			t.Errorf("inbox column = %+v, want %+v", c, w)
		}
	}
}

func TestImport_CopiesAndMovesSequences(t *testing.T) {
	ctx := context.Background()
	st := openAt(t, pgtest.NewDatabase(t))
	err := st.Import(ctx, false, func(ctx context.Context, im *postgres.Importer) error {
		if n, err := im.Copy(ctx, "sessions", sessionCols, &rowsOf{rows: [][]any{sessionRow("s1"), sessionRow("s2")}}); err != nil || n != 2 {
			t.Errorf("Copy sessions = %d, %v", n, err)
		}
		inbox := [][]any{{int64(41), "slack", "k", "message", []byte("x"), "done", "", int64(1), ts, ts}}
		if _, err := im.Copy(ctx, "inbox", inboxCols, &rowsOf{rows: inbox}); err != nil {
			t.Errorf("Copy inbox: %v", err)
		}
		if n, err := im.Count(ctx, "sessions"); err != nil || n != 2 {
			t.Errorf("Count in the transaction = %d, %v; want 2", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := st.Session(ctx, "s2"); err != nil || s.Status != engine.StatusIdle {
		t.Errorf("Session(s2) = %+v, %v", s, err)
	}
	// The next generated inbox id follows the copied one.
	if _, err := st.RecordInbound(ctx, time.Now(), []store.Inbound{{Source: "slack", ThreadKey: "k2", Kind: "message", Payload: []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	pending, err := st.PendingInbound(ctx, "slack", 10)
	if err != nil || len(pending) != 1 || pending[0].ID != 42 {
		t.Errorf("PendingInbound = %+v, %v; want one item with id 42", pending, err)
	}
}

func TestImport_RefusesNonEmptyUnlessReplace(t *testing.T) {
	ctx := context.Background()
	st := openAt(t, pgtest.NewDatabase(t))
	storetest.CreateSession(t, st, storetest.Session("old", storetest.T0))
	called := false
	err := st.Import(ctx, false, func(context.Context, *postgres.Importer) error { called = true; return nil })
	if !errors.Is(err, postgres.ErrNotEmpty) || called {
		t.Fatalf("Import into a non-empty database = %v (fn called: %v); want ErrNotEmpty before fn", err, called)
	}
	err = st.Import(ctx, true, func(ctx context.Context, im *postgres.Importer) error {
		_, err := im.Copy(ctx, "sessions", sessionCols, &rowsOf{rows: [][]any{sessionRow("new")}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Sessions(ctx, engine.SessionFilter{})
	if err != nil || len(got) != 1 || got[0].ID != "new" {
		t.Errorf("after replace, Sessions = %+v, %v; want only the imported one", got, err)
	}
}

func TestImport_FailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	st := openAt(t, pgtest.NewDatabase(t))
	boom := errors.New("boom")
	err := st.Import(ctx, false, func(ctx context.Context, im *postgres.Importer) error {
		if _, err := im.Copy(ctx, "sessions", sessionCols, &rowsOf{rows: [][]any{sessionRow("s1")}}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Import = %v, want fn's error", err)
	}
	if got, _ := st.Sessions(ctx, engine.SessionFilter{}); len(got) != 0 {
		t.Errorf("after a failed import, Sessions = %+v; want none", got)
	}
	err = st.Import(ctx, false, func(ctx context.Context, im *postgres.Importer) error {
		_, err := im.Copy(ctx, "sessions", []string{"id", "no_such_column"}, &rowsOf{})
		return err
	})
	if err == nil {
		t.Error("Copy into a column the table lacks: want an error")
	}
	if err := st.Import(ctx, false, func(ctx context.Context, im *postgres.Importer) error {
		if !slices.ContainsFunc(im.Tables(), func(tb postgres.Table) bool { return tb.Name == "events" }) {
			t.Errorf("Importer.Tables = %v, want events among them", im.Tables())
		}
		_, err := im.Count(ctx, "nope")
		return err
	}); err == nil {
		t.Error("Count of a made-up table: want an error")
	}
}
