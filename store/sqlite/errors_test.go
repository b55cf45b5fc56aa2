package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/mattn/go-sqlite3"

	"brain/engine"
	"brain/store"
)

// TestInterpretError pins how a SQLite error becomes the contract's: what
// is already in the contract's terms passes unchanged, anything else is
// wrapped with the operation and stays inspectable.
func TestInterpretError(t *testing.T) {
	// A real constraint violation from SQLite, not a hand-made value.
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	_, dupErr := db.ExecContext(ctx, `INSERT INTO t VALUES ('a')`)
	if !isConstraint(dupErr) {
		t.Fatalf("second insert = %v, want a constraint error", dupErr)
	}

	notFoundErr := notFound("session", "s1")
	invariantErr := invariant("commit: empty session id")
	fencedErr := fmt.Errorf("commit session s1: %w", engine.ErrFenced)
	conflictErr := engine.Errorf(engine.CodeConflict, "event e1 already exists")
	plain := errors.New("disk I/O error")

	cases := []struct {
		name    string
		err     error
		same    bool   // returned unchanged
		message string // else the message returned
		want    error  // else, when set, returned exactly
		is      error  // and what it still matches
	}{
		{name: "nil", err: nil, same: true},
		{name: "not found", err: notFoundErr, same: true},
		{name: "conflict", err: conflictErr, same: true},
		{name: "invariant", err: invariantErr, same: true},
		{name: "fenced", err: fencedErr, same: true},
		{name: "update error", err: fmt.Errorf("tx: %w", store.UpdateError{Err: conflictErr}), want: conflictErr},
		{name: "sqlite error", err: dupErr, message: "commit session s1: " + dupErr.Error(), is: dupErr},
		{name: "other error", err: plain, message: "commit session s1: disk I/O error", is: plain},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := interpretError("commit session s1", tc.err)
			if tc.same {
				if got != tc.err {
					t.Fatalf("interpretError(%v) = %v, want it unchanged", tc.err, got)
				}
				return
			}
			if tc.want != nil {
				if got != tc.want {
					t.Fatalf("interpretError(%v) = %v, want the Update's error %v as it is", tc.err, got, tc.want)
				}
				return
			}
			if got == nil || got.Error() != tc.message {
				t.Fatalf("interpretError(%v) = %v, want %q", tc.err, got, tc.message)
			}
			if !errors.Is(got, tc.is) {
				t.Errorf("interpretError(%v) = %v, no longer matches %v", tc.err, got, tc.is)
			}
			if se := (sqlite3.Error{}); errors.Is(tc.err, dupErr) && !errors.As(got, &se) {
				t.Errorf("interpretError(%v) hides the sqlite3.Error", tc.err)
			}
			if errors.Is(got, engine.ErrInvariant) || errors.Is(got, engine.ErrNotFound) {
				t.Errorf("interpretError(%v) = %v, made up a contract error", tc.err, got)
			}
		})
	}
}
