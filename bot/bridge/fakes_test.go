package bridge

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// fakeInbox is a store.Inbox whose behaviour a test sets; a method whose
// func is nil does nothing.
type fakeInbox struct {
	RecordInboundFunc  func(ctx context.Context, now time.Time, items []store.Inbound) ([]bool, error)
	PendingInboundFunc func(ctx context.Context, source string, limit int) ([]store.Inbound, error)
	FinishInboundFunc  func(ctx context.Context, now time.Time, done []store.Finished) error
	PruneInboundFunc   func(ctx context.Context, before time.Time) error
}

var _ store.Inbox = (*fakeInbox)(nil)

func (f *fakeInbox) RecordInbound(ctx context.Context, now time.Time, items []store.Inbound) ([]bool, error) {
	if f.RecordInboundFunc == nil {
		return make([]bool, len(items)), nil
	}
	return f.RecordInboundFunc(ctx, now, items)
}

func (f *fakeInbox) PendingInbound(ctx context.Context, source string, limit int) ([]store.Inbound, error) {
	if f.PendingInboundFunc == nil {
		return nil, nil
	}
	return f.PendingInboundFunc(ctx, source, limit)
}

// ClaimInbound claims what PendingInbound returns: the fake has one worker.
func (f *fakeInbox) ClaimInbound(ctx context.Context, source, _ string, _, _ time.Time, limit int) ([]store.Inbound, error) {
	return f.PendingInbound(ctx, source, limit)
}

func (f *fakeInbox) FinishInbound(ctx context.Context, now time.Time, done []store.Finished) error {
	if f.FinishInboundFunc == nil {
		return nil
	}
	return f.FinishInboundFunc(ctx, now, done)
}

func (f *fakeInbox) PruneInbound(ctx context.Context, before time.Time) error {
	if f.PruneInboundFunc == nil {
		return nil
	}
	return f.PruneInboundFunc(ctx, before)
}

// fakeEngine is an Engine whose behaviour a test sets; a method whose func
// is nil is not expected to be called (it panics).
type fakeEngine struct {
	WatchFunc    func() *engine.Watcher
	SessionFunc  func(ctx context.Context, id string) (engine.Session, error)
	SessionsFunc func(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error)
	EventsFunc   func(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error)
	// Shared makes the fake one of several replicas; Holds lists the
	// sessions whose lease it holds, and leases counts its Lease calls.
	Shared bool
	Holds  map[string]bool
	leases atomic.Int64
}

var _ Engine = (*fakeEngine)(nil)

func (f *fakeEngine) Watch() *engine.Watcher { return f.WatchFunc() }

// Lease is always held: the fake is the only replica.
func (f *fakeEngine) LeaseDelivery(context.Context, engine.Origin, string) (func(), bool, error) {
	f.leases.Add(1)
	return func() {}, true, nil
}

func (f *fakeEngine) ReplicaID() string { return "fake" }

func (f *fakeEngine) SharesStore() bool { return f.Shared }

func (f *fakeEngine) HoldsSession(id string) bool { return f.Holds[id] }

func (f *fakeEngine) LeaseTTL() time.Duration { return time.Minute }

func (f *fakeEngine) Session(ctx context.Context, id string) (engine.Session, error) {
	return f.SessionFunc(ctx, id)
}

func (f *fakeEngine) Sessions(ctx context.Context, filter engine.SessionFilter) ([]engine.Session, error) {
	return f.SessionsFunc(ctx, filter)
}

func (f *fakeEngine) Events(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error) {
	return f.EventsFunc(ctx, sessionID, after, limit)
}

// logUpTo is an EventsFunc whose sessions' logs hold the events numbered
// 1 to last[session id].
func logUpTo(last map[string]int64) func(context.Context, string, int64, int) ([]engine.Event, error) {
	return func(_ context.Context, id string, after int64, limit int) ([]engine.Event, error) {
		var out []engine.Event
		for seq := after + 1; seq <= last[id] && len(out) < limit; seq++ {
			out = append(out, engine.Event{Seq: seq, Type: engine.EventAgentMessage})
		}
		return out, nil
	}
}

// memCursors is an in-memory store.DeliveryCursors.
type memCursors struct {
	mu   sync.Mutex
	seqs map[string]int64 // origin/session -> seq
}

var _ store.DeliveryCursors = (*memCursors)(nil)

func (m *memCursors) DeliveryCursor(_ context.Context, origin engine.Origin, sessionID string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seqs[string(origin)+"/"+sessionID], nil
}

func (m *memCursors) SetDeliveryCursor(_ context.Context, _ time.Time, origin engine.Origin, sessionID string, seq int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seqs == nil {
		m.seqs = map[string]int64{}
	}
	m.seqs[string(origin)+"/"+sessionID] = seq
	return nil
}

// renderFunc is a Renderer from a function.
type renderFunc func(ctx context.Context, s engine.Session, ev engine.Event) error

func (f renderFunc) Render(ctx context.Context, s engine.Session, ev engine.Event) error {
	return f(ctx, s, ev)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func fixedNow() time.Time { return time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC) }

// waitFor polls cond until it holds or a few seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
