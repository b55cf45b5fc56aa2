package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"brain/engine"
	"brain/store"
)

// TestInterpretError pins how a PostgreSQL error becomes the contract's:
// what is already in the contract's terms passes unchanged, text
// PostgreSQL cannot keep is an invariant, anything else is wrapped with the
// operation and stays inspectable.
func TestInterpretError(t *testing.T) {
	badText := &pgconn.PgError{Code: codeBadEncoding, Message: `invalid byte sequence for encoding "UTF8": 0xff`}
	unique := &pgconn.PgError{Code: codeUniqueViolation, Message: "duplicate key value violates unique constraint"}
	notFoundErr := notFound("session", "s1")
	invariantErr := invariant("commit: empty session id")
	fencedErr := fmt.Errorf("commit session s1: %w", engine.ErrFenced)
	conflictErr := engine.Errorf(engine.CodeConflict, "event e1 already exists")
	plain := errors.New("conn closed")

	cases := []struct {
		name    string
		err     error
		same    bool   // returned unchanged
		message string // else the message returned
		want    error  // else, when set, returned exactly
		is      error  // and what it matches
	}{
		{name: "nil", err: nil, same: true},
		{name: "not found", err: notFoundErr, same: true},
		{name: "conflict", err: conflictErr, same: true},
		{name: "invariant", err: invariantErr, same: true},
		{name: "fenced", err: fencedErr, same: true},
		{name: "update error", err: fmt.Errorf("tx: %w", store.UpdateError{Err: conflictErr}), want: conflictErr},
		{name: "bad text", err: badText, is: engine.ErrInvariant,
			message: engine.ErrInvariant.Error() + ": commit session s1: text is not valid UTF-8 or holds a NUL byte: " + badText.Error()},
		{name: "unique violation", err: unique, is: unique, message: "commit session s1: " + unique.Error()},
		{name: "other error", err: plain, is: plain, message: "commit session s1: conn closed"},
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
				t.Errorf("interpretError(%v) = %v, does not match %v", tc.err, got, tc.is)
			}
		})
	}
}
