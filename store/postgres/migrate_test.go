package postgres_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/storetest"
)

// rawConn is a plain connection to dsn, to look at what the store wrote.
func rawConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func migrationVersions(t *testing.T, conn *pgx.Conn) []int {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("query schema_migrations: %v", err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatalf("query schema_migrations: %v", err)
	}
	return vs
}

// allVersions is the versions of the embedded migrations, in order (the
// numbers before the first "_" of their names; they may have gaps).
func allVersions(t *testing.T) []int {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v, %v", files, err)
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
	dsn := pgtest.NewDatabase(t)

	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	storetest.CreateSession(t, st, storetest.Session("s1", storetest.T0))
	st.Close()

	conn := rawConn(t, dsn)
	if got, want := migrationVersions(t, conn), allVersions(t); !slices.Equal(got, want) {
		t.Fatalf("schema_migrations versions = %v, want %v", got, want)
	}

	// Re-opening applies nothing and keeps the data.
	st = openAt(t, dsn)
	if _, err := st.Session(ctx, "s1"); err != nil {
		t.Fatalf("Session after re-open: %v", err)
	}
	if got, want := migrationVersions(t, conn), allVersions(t); !slices.Equal(got, want) {
		t.Fatalf("versions after re-open = %v, want %v", got, want)
	}
}

// TestStore_ConcurrentOpenMigratesOnce: brain processes starting together
// on an empty database take turns migrating; all of them open.
func TestStore_ConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	const n = 4
	var wg sync.WaitGroup
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = postgres.Open(context.Background(), dsn)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		stores[i].Close()
	}
	if got, want := migrationVersions(t, rawConn(t, dsn)), allVersions(t); !slices.Equal(got, want) {
		t.Fatalf("schema_migrations versions = %v, want %v", got, want)
	}
}

func TestStore_OpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	openAt(t, dsn)
	if _, err := rawConn(t, dsn).Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, dsn)
	if err == nil {
		st.Close()
		t.Fatal("Open succeeded on a database from a newer build")
	}
	if !strings.Contains(err.Error(), "newer than this build") {
		t.Errorf("Open err = %v, want it to name the newer schema", err)
	}
}

// TestStore_OpenBadDSN: a dsn that does not parse is refused without
// repeating it, since it may hold a password.
func TestStore_OpenBadDSN(t *testing.T) {
	for _, dsn := range []string{"", "postgres://brain:s3cret@db:notaport/brain"} {
		st, err := postgres.Open(context.Background(), dsn)
		if err == nil {
			st.Close()
			t.Fatalf("Open(%q) succeeded", dsn)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) err = %v: it repeats the password", dsn, err)
		}
	}
}
