package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// TestStoreChecks pins the contract errors every Store returns before any
// I/O: they match ErrInvariant and their messages name what is wrong.
func TestStoreChecks(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	bad := json.RawMessage(`{"x":`)
	ok := json.RawMessage(`{"x":1}`)
	// applyOutput is the check of the output an approval commit's Update
	// leaves, which ApplyApproval makes.
	applyOutput := func(out json.RawMessage) error {
		c := engine.ApprovalCommit{ID: "a1", Update: func(a *engine.Approval) error { a.Output = out; return nil }}
		_, _, err := store.ApplyApproval(c, engine.Approval{ID: "a1"})
		return err
	}
	cases := []struct {
		name string
		err  error
		want string // "" means accepted
	}{
		{"session", store.CheckNewSession(engine.Session{ID: "s1"}), ""},
		{"session without id", store.CheckNewSession(engine.Session{}), "create session: empty id"},

		{"commit", store.CheckCommit(engine.Commit{SessionID: "s1", Now: now,
			Events:      []engine.Event{{ID: "e1", Data: ok}, {ID: "e2"}},
			Result:      &engine.ResultRecord{Data: ok},
			NewApproval: &engine.Approval{ID: "a1", Input: ok}}), ""},
		{"commit without session", store.CheckCommit(engine.Commit{Now: now}), "commit: empty session id"},
		{"commit without now", store.CheckCommit(engine.Commit{SessionID: "s1"}), "commit session s1: Now is zero"},
		{"event without id", store.CheckCommit(engine.Commit{SessionID: "s1", Now: now,
			Events: []engine.Event{{ID: "e1"}, {}}}), "commit session s1: event 1 has no id"},
		{"event data", store.CheckCommit(engine.Commit{SessionID: "s1", Now: now,
			Events: []engine.Event{{ID: "e1", Data: bad}}}), "commit session s1: event e1: data is not valid JSON"},
		{"result data", store.CheckCommit(engine.Commit{SessionID: "s1", Now: now,
			Result: &engine.ResultRecord{Data: bad}}), "commit session s1: result data is not valid JSON"},
		{"approval without id", store.CheckCommit(engine.Commit{SessionID: "s1", Now: now,
			NewApproval: &engine.Approval{}}), "commit session s1: new approval has no id"},
		{"approval input", store.CheckCommit(engine.Commit{SessionID: "s1", Now: now,
			NewApproval: &engine.Approval{ID: "a1", Input: bad}}), "commit session s1: approval a1: input is not valid JSON"},
		{"approval output", store.CheckCommit(engine.Commit{SessionID: "s1", Now: now,
			NewApproval: &engine.Approval{ID: "a1", Output: bad}}), "commit session s1: approval a1: output is not valid JSON"},

		{"approval commit", store.CheckApprovalCommit(engine.ApprovalCommit{ID: "a1", Now: now, Events: []engine.Event{{ID: "e1"}}}), ""},
		{"approval commit without id", store.CheckApprovalCommit(engine.ApprovalCommit{Now: now}), "commit approval: empty id"},
		{"approval commit without now", store.CheckApprovalCommit(engine.ApprovalCommit{ID: "a1"}), "commit approval a1: Now is zero"},
		{"approval commit event", store.CheckApprovalCommit(engine.ApprovalCommit{ID: "a1", Now: now,
			Events: []engine.Event{{}}}), "commit approval a1: event 0 has no id"},
		{"updated output", applyOutput(ok), ""},
		{"no updated output", applyOutput(nil), ""},
		{"bad updated output", applyOutput(bad), "commit approval a1: output is not valid JSON"},
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
