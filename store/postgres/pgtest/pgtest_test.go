package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestRequired(t *testing.T) {
	tests := []struct {
		ci, require string
		want        bool
	}{
		{"", "", false},
		{"true", "", true},
		{"", "1", true},
		{"0", "false", false},
		{"false", "yes", true},
	}
	for _, tt := range tests {
		t.Setenv("CI", tt.ci)
		t.Setenv("BRAIN_REQUIRE_POSTGRES", tt.require)
		if got := Required(); got != tt.want {
			t.Errorf("Required() with CI=%q BRAIN_REQUIRE_POSTGRES=%q = %v, want %v", tt.ci, tt.require, got, tt.want)
		}
	}
}

// TestStartStop starts a cluster of its own, uses a database on it and
// stops it: the server is gone and so is its directory.
func TestStartStop(t *testing.T) {
	ctx := context.Background()
	srv, err := Start(ctx)
	if err != nil {
		if Required() {
			t.Fatalf("Start: %v", err)
		}
		t.Skipf("PostgreSQL tests skipped: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.Stop()
		}
	}()
	name, dsn, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to %s: %v", name, err)
	}
	var user string
	if err := conn.QueryRow(ctx, `SELECT current_user`).Scan(&user); err != nil || user != "postgres" {
		t.Errorf("current_user = %q, %v; want postgres", user, err)
	}
	conn.Close(ctx)
	if err := srv.DropDatabase(ctx, name); err != nil {
		t.Error(err)
	}

	srv.Stop()
	stopped = true
	if _, err := os.Stat(srv.dir); !os.IsNotExist(err) {
		t.Errorf("directory %s after Stop: %v, want it removed", srv.dir, err)
	}
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		conn.Close(ctx)
		t.Error("connected after Stop")
	}
}
