package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow(`PRAGMA ` + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

// TestOpen_ConnectionSettings checks the DSN reaches every connection: the
// pragmas are per connection, so a wrong DSN would silently drop them.
func TestOpen_ConnectionSettings(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		wantSync string // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"default is full", Options{}, "2"},
		{"normal", Options{Synchronous: "normal"}, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := OpenWithOptions(context.Background(), filepath.Join(t.TempDir(), "x?y#z.db"), tt.opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer st.Close()
			if got := pragma(t, st.write, "synchronous"); got != tt.wantSync {
				t.Errorf("writer synchronous = %s, want %s", got, tt.wantSync)
			}
			for db, name := range map[*sql.DB]string{st.write: "writer", st.read: "reader"} {
				if got := pragma(t, db, "journal_mode"); got != "wal" {
					t.Errorf("%s journal_mode = %s, want wal", name, got)
				}
				if got := pragma(t, db, "foreign_keys"); got != "1" {
					t.Errorf("%s foreign_keys = %s, want 1", name, got)
				}
				if got := pragma(t, db, "busy_timeout"); got != "5000" {
					t.Errorf("%s busy_timeout = %s, want 5000", name, got)
				}
			}
			if got := pragma(t, st.read, "query_only"); got != "1" {
				t.Errorf("reader query_only = %s, want 1", got)
			}
		})
	}
}
