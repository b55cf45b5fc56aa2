package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

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
