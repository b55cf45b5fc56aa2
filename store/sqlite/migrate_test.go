package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/store/sqlite"
	"brain/store/storetest"
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

// fileAtVersion builds, at path, the file an older build left at schema
// version: the embedded migrations up to it, applied as that build did.
// The caller adds its rows through the returned connection.
func fileAtVersion(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	db := rawDB(t, path)
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files[:version] {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("build version %d file: %s: %v", version, f, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, i+1, filepath.Base(f)); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// allVersions is the versions of the embedded migrations, in order (the
// numbers before the first "_" of their names; they may have gaps).
func allVersions(t *testing.T) []int {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	// Versions are the files' NNNN prefixes; they need not be contiguous.
	var out []int
	for _, f := range files {
		prefix, _, _ := strings.Cut(filepath.Base(f), "_")
		v, err := strconv.Atoi(prefix)
		if err != nil {
			t.Fatalf("migration %s: %v", f, err)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func TestStore_MigrationsApplyOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "brain.db") // Open creates the directory

	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	storetest.CreateSession(t, st, storetest.Session("s1", storetest.T0))
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
	old := fileAtVersion(t, path, 1)
	for _, stmt := range []string{
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
	if got, want := migrationVersions(t, rawDB(t, path)), allVersions(t); !slices.Equal(got, want) {
		t.Fatalf("schema_migrations versions = %v, want %v", got, want)
	}
	a := storetest.Approval("a1", storetest.T0)
	res := storetest.Commit(t, st, engine.Commit{SessionID: "old", NewApproval: &a,
		Events: []engine.Event{{ID: "e2", Type: engine.EventApprovalRequested}}})
	if res.Events[0].Seq != 2 {
		t.Errorf("seq after migration = %d, want 2", res.Events[0].Seq)
	}
	if _, err := st.Approval(ctx, "a1"); err != nil {
		t.Errorf("Approval after migration: %v", err)
	}
	// The new table's foreign key holds against old sessions too.
	a2 := storetest.Approval("a2", storetest.T0)
	if _, err := st.Commit(ctx, engine.Commit{SessionID: "missing", Now: storetest.T0, NewApproval: &a2}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Commit to a missing session = %v, want not found", err)
	}
}

// TestStore_MigrateKVToChannelState opens a file an older build left at
// schema version 4, with channel state in its kv table: migration 5 moves
// every key shape the bridges wrote into the typed tables, and the new
// methods read them as the bridges read the kv rows.
func TestStore_MigrateKVToChannelState(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brain.db")
	old := fileAtVersion(t, path, 4)
	const at = "2025-01-01T00:00:00.000000000Z"
	rows := map[string]string{
		"slack:cursor:ses_1":                        "12",
		"linear:cursor:ses_1":                       "3",
		"linear:cursor:ses_2":                       "40",
		"slack:approval:apr_1":                      "1700000000.000100",
		"slack:question:ses_1":                      `{"ts":"1700000000.000200","question":{"id":"q1","text":"Which?","options":[{"label":"A","value":"a"}],"call_id":"c1","turn_id":"t1","asked_at":"2025-01-01T00:00:00Z"}}`,
		"slack:question:ses_2":                      "",          // closed
		"slack:question:ses_3":                      "{not json", // unreadable: the bridge ignored it
		"slack:context:slack:T1:C1:1700000000.0003": "The run \"digest\" said:\nall good",
		"slack:context:slack:T1:C1:1700000000.0004": "",
	}
	for k, v := range rows {
		if _, err := old.Exec(`INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?)`, k, v, at); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	st := openAt(t, path)
	if got, want := migrationVersions(t, rawDB(t, path)), allVersions(t); !slices.Equal(got, want) {
		t.Fatalf("schema_migrations versions = %v, want %v", got, want)
	}

	for _, c := range []struct {
		origin  engine.Origin
		session string
		want    int64
	}{
		{engine.OriginSlack, "ses_1", 12},
		{engine.OriginLinear, "ses_1", 3},
		{engine.OriginLinear, "ses_2", 40},
		{engine.OriginSlack, "ses_2", 0},
	} {
		if got, err := st.DeliveryCursor(ctx, c.origin, c.session); err != nil || got != c.want {
			t.Errorf("DeliveryCursor(%s, %s) = %d, %v; want %d", c.origin, c.session, got, err, c.want)
		}
	}
	if ref, ok, err := st.ApprovalMessage(ctx, engine.OriginSlack, "apr_1"); err != nil || !ok || ref != "1700000000.000100" {
		t.Errorf("ApprovalMessage(apr_1) = %q, %v, %v", ref, ok, err)
	}
	q, ok, err := st.PostedQuestion(ctx, engine.OriginSlack, "ses_1")
	want := store.PostedQuestion{MessageRef: "1700000000.000200", Question: engine.Question{
		ID: "q1", Text: "Which?", Options: []engine.Option{{Label: "A", Value: "a"}},
		CallID: "c1", TurnID: "t1", AskedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	}}
	if err != nil || !ok || !reflect.DeepEqual(q, want) {
		t.Errorf("PostedQuestion(ses_1) = %+v, %v, %v\nwant %+v", q, ok, err, want)
	}
	for _, session := range []string{"ses_2", "ses_3"} {
		if _, ok, err := st.PostedQuestion(ctx, engine.OriginSlack, session); ok || err != nil {
			t.Errorf("PostedQuestion(%s) = %v, %v; want none, as the bridge saw it", session, ok, err)
		}
	}
	if note, ok, err := st.ThreadContext(ctx, "slack:T1:C1:1700000000.0003"); err != nil || !ok || note != "The run \"digest\" said:\nall good" {
		t.Errorf("ThreadContext = %q, %v, %v", note, ok, err)
	}
	if note, ok, err := st.ThreadContext(ctx, "slack:T1:C1:1700000000.0004"); err != nil || !ok || note != "" {
		t.Errorf("ThreadContext with an empty note = %q, %v, %v; want marked", note, ok, err)
	}
	var n int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'kv'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("kv table left behind: count %d, %v", n, err)
	}
}
