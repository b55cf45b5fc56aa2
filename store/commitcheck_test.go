package engine_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"brain/engine"
)

// TestStoreChecks pins the contract errors every Store returns before any
// I/O: they match ErrInvariant and their messages name what is wrong.
func TestStoreChecks(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	bad := json.RawMessage(`{"x":`)
	ok := json.RawMessage(`{"x":1}`)
	cases := []struct {
		name string
		err  error
		want string // "" means accepted
	}{
		{"session", engine.Session{ID: "s1"}.ValidateNew(), ""},
		{"session without id", engine.Session{}.ValidateNew(), "create session: empty id"},

		{"commit", engine.Commit{SessionID: "s1", Now: now,
			Events:      []engine.Event{{ID: "e1", Data: ok}, {ID: "e2"}},
			Result:      &engine.ResultRecord{Data: ok},
			NewApproval: &engine.Approval{ID: "a1", Input: ok}}.Validate(), ""},
		{"commit without session", engine.Commit{Now: now}.Validate(), "commit: empty session id"},
		{"commit without now", engine.Commit{SessionID: "s1"}.Validate(), "commit session s1: Now is zero"},
		{"event without id", engine.Commit{SessionID: "s1", Now: now,
			Events: []engine.Event{{ID: "e1"}, {}}}.Validate(), "commit session s1: event 1 has no id"},
		{"event data", engine.Commit{SessionID: "s1", Now: now,
			Events: []engine.Event{{ID: "e1", Data: bad}}}.Validate(), "commit session s1: event e1: data is not valid JSON"},
		{"result data", engine.Commit{SessionID: "s1", Now: now,
			Result: &engine.ResultRecord{Data: bad}}.Validate(), "commit session s1: result data is not valid JSON"},
		{"approval without id", engine.Commit{SessionID: "s1", Now: now,
			NewApproval: &engine.Approval{}}.Validate(), "commit session s1: new approval has no id"},
		{"approval input", engine.Commit{SessionID: "s1", Now: now,
			NewApproval: &engine.Approval{ID: "a1", Input: bad}}.Validate(), "commit session s1: approval a1: input is not valid JSON"},
		{"approval output", engine.Commit{SessionID: "s1", Now: now,
			NewApproval: &engine.Approval{ID: "a1", Output: bad}}.Validate(), "commit session s1: approval a1: output is not valid JSON"},

		{"approval commit", engine.ApprovalCommit{ID: "a1", Now: now, Events: []engine.Event{{ID: "e1"}}}.Validate(), ""},
		{"approval commit without id", engine.ApprovalCommit{Now: now}.Validate(), "commit approval: empty id"},
		{"approval commit without now", engine.ApprovalCommit{ID: "a1"}.Validate(), "commit approval a1: Now is zero"},
		{"approval commit event", engine.ApprovalCommit{ID: "a1", Now: now,
			Events: []engine.Event{{}}}.Validate(), "commit approval a1: event 0 has no id"},
		{"updated output", engine.ApprovalCommit{ID: "a1"}.ValidateOutput(ok), ""},
		{"no updated output", engine.ApprovalCommit{ID: "a1"}.ValidateOutput(nil), ""},
		{"bad updated output", engine.ApprovalCommit{ID: "a1"}.ValidateOutput(bad), "commit approval a1: output is not valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkInvariant(t, tc.err, tc.want)
		})
	}
}

func checkInvariant(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, engine.ErrInvariant) {
		t.Fatalf("err = %v, want ErrInvariant", err)
	}
	if got, full := err.Error(), engine.ErrInvariant.Error()+": "+want; got != full {
		t.Errorf("err = %q, want %q", got, full)
	}
}
