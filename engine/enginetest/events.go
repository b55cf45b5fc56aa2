// Package enginetest holds fakes of what the platform adapters read of the
// engine, for their tests. It imports only engine.
package enginetest

import (
	"context"
	"sync"
	"testing"

	"brain/engine"
)

// Events is a fixed event log and set of approvals, read the way a
// renderer reads *engine.Engine. It is safe for concurrent use.
type Events struct {
	mu        sync.Mutex
	log       []engine.Event
	approvals map[string]engine.Approval
}

// Events returns up to limit events after seq after.
func (f *Events) Events(_ context.Context, _ string, after int64, limit int) ([]engine.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []engine.Event
	for _, ev := range f.log {
		if ev.Seq > after && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}

// Approval returns the approval set with SetApproval, or engine.ErrNotFound.
func (f *Events) Approval(_ context.Context, id string) (engine.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return engine.Approval{}, engine.ErrNotFound
	}
	return a, nil
}

// Add appends payloads to the log, numbering them on.
func (f *Events) Add(t *testing.T, ps ...engine.Payload) {
	t.Helper()
	for _, p := range ps {
		ev, err := engine.NewEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		f.AddEvent(ev)
	}
}

// AddEvent appends ev as it is (an unreadable one, say), numbering it on.
func (f *Events) AddEvent(ev engine.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev.Seq = int64(len(f.log) + 1)
	f.log = append(f.log, ev)
}

// SetApproval adds a, or replaces the approval with its id.
func (f *Events) SetApproval(a engine.Approval) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.approvals == nil {
		f.approvals = map[string]engine.Approval{}
	}
	f.approvals[a.ID] = a
}

// RenderAfter hands each event after seq after to render, in order, as a
// deliverer does, and returns the seq of the last one; the test fails at
// the first error.
func (f *Events) RenderAfter(t *testing.T, after int64, render func(engine.Event) error) int64 {
	t.Helper()
	f.mu.Lock()
	var evs []engine.Event
	for _, ev := range f.log {
		if ev.Seq > after {
			evs = append(evs, ev)
		}
	}
	f.mu.Unlock()
	for _, ev := range evs {
		if err := render(ev); err != nil {
			t.Fatalf("render %s #%d: %v", ev.Type, ev.Seq, err)
		}
		after = ev.Seq
	}
	return after
}
