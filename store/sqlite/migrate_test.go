package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"brain/engine"
	"brain/store/sqlite"
)

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func migrationVersions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("query schema_migrations: %v", err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestStore_MigrationsApplyOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "brain.db") // Open creates the directory

	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	createSession(t, st, testSession("s1", t0))
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db := rawDB(t, path)
	first := migrationVersions(t, db)
	if len(first) == 0 || first[0] != 1 {
		t.Fatalf("schema_migrations versions = %v, want to start at 1", first)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}

	// Re-opening applies nothing and keeps the data.
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("re-Open: %v", err)
	}
	defer st.Close()
	if _, err := st.Session(ctx, "s1"); err != nil {
		t.Fatalf("Session after re-open: %v", err)
	}
	again := migrationVersions(t, db)
	if len(again) != len(first) {
		t.Fatalf("versions after re-open = %v, want %v", again, first)
	}
}

func TestStore_OpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brain.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	st.Close()

	db := rawDB(t, path)
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	if st, err := sqlite.Open(ctx, path); err == nil {
		st.Close()
		t.Fatal("Open succeeded on a database from a newer build")
	}
}

func TestStore_OpenRejectsBadOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "brain.db")
	if st, err := sqlite.OpenWithOptions(context.Background(), path, sqlite.Options{Synchronous: "sometimes"}); err == nil {
		st.Close()
		t.Fatal("OpenWithOptions accepted synchronous=sometimes")
	}
}

// TestStore_MigrateVersion1File opens a file an older build left at schema
// version 1, with data in it: migration 2 applies and the old rows work with
// the new tables.
func TestStore_MigrateVersion1File(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brain.db")
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	old := rawDB(t, path)
	for _, stmt := range []string{
		`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL) STRICT`,
		string(v1),
		`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init.sql')`,
		`INSERT INTO sessions (id, agent, origin, interactive, status, created_at, updated_at, last_seq)
			VALUES ('old', 'default', 'api', 1, 'idle', '2025-01-01T00:00:00.000000000Z', '2025-01-01T00:00:00.000000000Z', 1)`,
		`INSERT INTO events (session_id, seq, id, type, created_at, data)
			VALUES ('old', 1, 'e1', 'user.message', '2025-01-01T00:00:00.000000000Z', '{"text":"hi"}')`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatalf("build version 1 file: %v", err)
		}
	}
	old.Close()

	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open version 1 file: %v", err)
	}
	defer st.Close()
	files, _ := filepath.Glob("migrations/*.sql")
	var want []int
	for i := range files {
		want = append(want, i+1)
	}
	if got := migrationVersions(t, rawDB(t, path)); !slices.Equal(got, want) {
		t.Fatalf("schema_migrations versions = %v, want %v", got, want)
	}
	a := testApproval("a1", t0)
	res := commit(t, st, engine.Commit{SessionID: "old", NewApproval: &a,
		Events: []engine.Event{{ID: "e2", Type: engine.EventApprovalRequested}}})
	if res.Events[0].Seq != 2 {
		t.Errorf("seq after migration = %d, want 2", res.Events[0].Seq)
	}
	if _, err := st.Approval(ctx, "a1"); err != nil {
		t.Errorf("Approval after migration: %v", err)
	}
	// The new table's foreign key holds against old sessions too.
	a2 := testApproval("a2", t0)
	if _, err := st.Commit(ctx, engine.Commit{SessionID: "missing", Now: t0, NewApproval: &a2}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Commit to a missing session = %v, want not found", err)
	}
}
