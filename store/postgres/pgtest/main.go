package pgtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// shared is the server Main started for the test binary, or why it could
// not start.
var shared struct {
	srv     *Server
	err     error
	started bool
}

// Required reports whether the tests must not skip: CI or
// BRAIN_REQUIRE_POSTGRES is set (to anything but "" or "0").
func Required() bool {
	for _, k := range []string{"CI", "BRAIN_REQUIRE_POSTGRES"} {
		if v := os.Getenv(k); v != "" && v != "0" && v != "false" {
			return true
		}
	}
	return false
}

// Main starts one server for the package's tests, runs them and stops the
// server; call it from TestMain. A server that cannot start is reported
// once here and again by each NewDatabase, which skips or fails.
func Main(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	shared.srv, shared.err = Start(ctx)
	cancel()
	shared.started = true
	if shared.err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: PostgreSQL not started: %v\n", shared.err)
	}
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

// NewDatabase creates an empty database on the server Main started, drops
// it when tb ends (after the cleanups registered later, such as closing
// stores on it), and returns its DSN. Without a server tb skips, or fails
// when Required.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	srv := Shared(tb)
	ctx := context.Background()
	name, dsn, err := srv.CreateDatabase(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := srv.DropDatabase(ctx, name); err != nil {
			tb.Error(err)
		}
	})
	return dsn
}

// Shared returns the server Main started; without one tb skips, or fails
// when Required.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if !shared.started {
		tb.Fatal("pgtest: call pgtest.Main from the package's TestMain")
	}
	if shared.err != nil {
		if Required() {
			tb.Fatalf("PostgreSQL is required here (CI or BRAIN_REQUIRE_POSTGRES is set) but did not start: %v", shared.err)
		}
		tb.Skipf("PostgreSQL tests skipped: the server did not start (set BRAIN_REQUIRE_POSTGRES=1 to fail instead): %v", shared.err)
	}
	return shared.srv
}
