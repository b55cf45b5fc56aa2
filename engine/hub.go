package engine

import (
	"context"
	"sync"
)

// hub wakes watchers of a session when events are committed to it. Each
// waiter gets a channel that is closed (and forgotten) at the next commit, so
// the map holds only sessions somebody is waiting on. Watchers (channels
// that deliver every session's events) get the ids of changed sessions.
type hub struct {
	mu       sync.Mutex
	waits    map[string]chan struct{}
	watchers map[*Watcher]struct{}
}

func (h *hub) wait(id string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waits == nil {
		h.waits = map[string]chan struct{}{}
	}
	ch, ok := h.waits[id]
	if !ok {
		ch = make(chan struct{})
		h.waits[id] = ch
	}
	return ch
}

func (h *hub) notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.waits[id]; ok {
		close(ch)
		delete(h.waits, id)
	}
	for w := range h.watchers {
		w.mark(id)
	}
}

// Notify wakes the session's watchers as a commit here does: for commits
// another replica made to the shared store (a live-update feed calls it).
// A spurious call only makes watchers read the log again.
func (e *Engine) Notify(sessionID string) { e.hub.notify(sessionID) }

// Watcher collects the ids of sessions that got new events since it was
// last drained. It never blocks a commit: ids accumulate in a set.
type Watcher struct {
	hub   *hub
	mu    sync.Mutex
	dirty map[string]struct{}
	wake  chan struct{}
}

// Watch starts collecting changed session ids; Close stops it.
func (e *Engine) Watch() *Watcher {
	w := &Watcher{hub: &e.hub, dirty: map[string]struct{}{}, wake: make(chan struct{}, 1)}
	e.hub.mu.Lock()
	if e.hub.watchers == nil {
		e.hub.watchers = map[*Watcher]struct{}{}
	}
	e.hub.watchers[w] = struct{}{}
	e.hub.mu.Unlock()
	return w
}

func (w *Watcher) mark(id string) {
	w.mu.Lock()
	w.dirty[id] = struct{}{}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Next waits until some session changed and returns the changed ids.
func (w *Watcher) Next(ctx context.Context) ([]string, error) {
	for {
		w.mu.Lock()
		if len(w.dirty) > 0 {
			ids := make([]string, 0, len(w.dirty))
			for id := range w.dirty {
				ids = append(ids, id)
			}
			clear(w.dirty)
			w.mu.Unlock()
			return ids, nil
		}
		w.mu.Unlock()
		select {
		case <-w.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Mark adds a session id as if it had changed (e.g. to retry a delivery).
func (w *Watcher) Mark(id string) { w.mark(id) }

// Close stops collecting.
func (w *Watcher) Close() {
	w.hub.mu.Lock()
	delete(w.hub.watchers, w)
	w.hub.mu.Unlock()
}
