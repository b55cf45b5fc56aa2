package engine_test

import (
	"errors"
	"fmt"
	"testing"

	"brain/engine"
)

func TestErrorMessage(t *testing.T) {
	notFound := engine.Errorf(engine.CodeNotFound, "no session ses_1")
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"coded", notFound, "no session ses_1"},
		{"wrapped coded", fmt.Errorf("load session: %w", notFound), "no session ses_1"},
		{"wrapped twice", fmt.Errorf("resume: %w", fmt.Errorf("load session: %w", notFound)), "no session ses_1"},
		{"joined", errors.Join(errors.New("close"), notFound), "no session ses_1"},
		{"coded internal", engine.Errorf(engine.CodeInternal, "disk full"), "disk full"},
		{"plain", errors.New("sql: database is closed"), "internal error"},
		{"wrapped plain", fmt.Errorf("append event: %w", errors.New("sql: database is closed")), "internal error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := engine.ErrorMessage(c.err); got != c.want {
				t.Fatalf("ErrorMessage(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}

func TestCodeOf(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"coded", engine.Errorf(engine.CodeTooLarge, "too big"), engine.CodeTooLarge},
		{"wrapped coded", fmt.Errorf("decode: %w", engine.Errorf(engine.CodeInvalid, "bad")), engine.CodeInvalid},
		{"sentinel", engine.ErrConflict, engine.CodeConflict},
		{"plain", errors.New("boom"), engine.CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := engine.CodeOf(c.err); got != c.want {
				t.Fatalf("CodeOf(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}
