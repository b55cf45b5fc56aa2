package store_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// TestApplyCommit pins the merge rule both drivers share: Update may change
// only the session's mutable fields, events are stamped after the row's
// last seq, and what the caller gets is what a later read returns.
func TestApplyCommit(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	cur := engine.Session{ID: "s1", Agent: "a", Origin: "api", ThreadKey: "t", Status: engine.StatusIdle,
		CreatedAt: created, UpdatedAt: created, LastSeq: 4, InputCursor: 2, Checkpoint: 3, Question: json.RawMessage(`{"q":1}`)}
	stamped := time.Date(2025, 12, 31, 23, 0, 0, 0, time.FixedZone("X", -3600))
	c := engine.Commit{
		SessionID: "s1",
		Now:       now,
		Update: func(s *engine.Session) error {
			// The store keeps identity, origin and bookkeeping whatever
			// Update does to them.
			s.ID, s.Agent, s.Origin, s.ThreadKey, s.LastSeq, s.CreatedAt = "x", "x", "x", "x", 99, now
			s.Status, s.InputCursor, s.Checkpoint, s.Question, s.Result = engine.StatusRunning, 5, 4, json.RawMessage{}, json.RawMessage(`{"r":1}`)
			return nil
		},
		Events: []engine.Event{
			{ID: "e1", Type: engine.EventUserMessage, Data: json.RawMessage(`{"text":"hi"}`)},
			{ID: "e2", Type: "turn.started", CreatedAt: stamped},
		},
	}
	got, err := store.ApplyCommit(c, cur, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := cur
	want.Status, want.InputCursor, want.Checkpoint, want.Question, want.Result = engine.StatusRunning, 5, 4, nil, json.RawMessage(`{"r":1}`)
	want.LastSeq, want.UpdatedAt = 6, now.UTC()
	if !reflect.DeepEqual(got.Session, want) {
		t.Errorf("session = %+v\nwant      %+v", got.Session, want)
	}
	if got.LastInputSeq != 5 {
		t.Errorf("last input seq = %d, want 5 (e1)", got.LastInputSeq)
	}
	wantEvents := []engine.Event{
		{ID: "e1", SessionID: "s1", Seq: 5, Type: engine.EventUserMessage, CreatedAt: now.UTC(), Data: json.RawMessage(`{"text":"hi"}`)},
		{ID: "e2", SessionID: "s1", Seq: 6, Type: "turn.started", CreatedAt: stamped.UTC(), Data: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(got.Events, wantEvents) {
		t.Errorf("events = %+v\nwant     %+v", got.Events, wantEvents)
	}
	if c.Events[1].Data != nil || c.Events[0].Seq != 0 {
		t.Error("ApplyCommit changed the caller's events")
	}

	boom := errors.New("boom")
	_, err = store.ApplyCommit(engine.Commit{SessionID: "s1", Now: now, Update: func(*engine.Session) error { return boom }}, cur, 2)
	var ue store.UpdateError
	if !errors.As(err, &ue) || ue.Err != boom {
		t.Errorf("failing Update = %v, want UpdateError{boom}", err)
	}
}

// TestApplyApproval pins the approval merge rule: Update may change only
// the decision and apply fields, Emit's events follow c.Events, and an
// output that is not JSON is refused.
func TestApplyApproval(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cur := engine.Approval{ID: "a1", SessionID: "s1", Tool: "deploy", Input: json.RawMessage(`{}`), Status: engine.ApprovalPending}
	c := engine.ApprovalCommit{
		ID: "a1", Now: at,
		Update: func(a *engine.Approval) error {
			a.SessionID, a.Tool, a.Input = "x", "x", json.RawMessage(`{"x":1}`)
			a.Status, a.DecidedBy, a.DecidedAt, a.Output, a.Attempts = engine.ApprovalApproved, "U1", at, json.RawMessage(`{"ok":true}`), 1
			return nil
		},
		Events: []engine.Event{{ID: "e1", Type: "approval.decided"}},
		Emit: func(a engine.Approval) ([]engine.Event, error) {
			return []engine.Event{{ID: "e2", Type: "approval." + string(a.Status)}}, nil
		},
	}
	got, evs, err := store.ApplyApproval(c, cur)
	if err != nil {
		t.Fatal(err)
	}
	want := cur
	want.Status, want.DecidedBy, want.DecidedAt, want.Output, want.Attempts = engine.ApprovalApproved, "U1", at, json.RawMessage(`{"ok":true}`), 1
	if !reflect.DeepEqual(got, want) {
		t.Errorf("approval = %+v\nwant       %+v", got, want)
	}
	if len(evs) != 2 || evs[0].ID != "e1" || evs[1].ID != "e2" || evs[1].Type != "approval.approved" {
		t.Errorf("events = %+v, want e1 then Emit's e2 of the updated row", evs)
	}

	bad := c
	bad.Update = func(a *engine.Approval) error { a.Output = json.RawMessage(`{"x":`); return nil }
	if _, _, err := store.ApplyApproval(bad, cur); !errors.Is(err, engine.ErrInvariant) {
		t.Errorf("output not JSON = %v, want ErrInvariant", err)
	}
	emitErr := c
	emitErr.Emit = func(engine.Approval) ([]engine.Event, error) { return []engine.Event{{}}, nil }
	var ue store.UpdateError
	if _, _, err := store.ApplyApproval(emitErr, cur); !errors.As(err, &ue) || !errors.Is(ue.Err, engine.ErrInvariant) {
		t.Errorf("Emit event without id = %v, want UpdateError carrying ErrInvariant", err)
	}
}
