package engine

import (
	"slices"
	"sync"
)

// hub wakes watchers of a session when events are committed to it. Each
// waiter gets a channel that is closed (and forgotten) at the next commit, so
// the map holds only sessions somebody is waiting on. Watchers (feeds of
// every session's changes) get the ids of changed sessions from the
// broker.
type hub struct {
	mu      sync.Mutex
	waits   map[string]chan struct{}
	changes *Broker[string]
}

func newHub() hub { return hub{changes: NewBroker(addID)} }

// addID folds a changed session id into a watcher's unread ids once.
func addID(unread []string, id string) []string {
	if slices.Contains(unread, id) {
		return unread
	}
	return append(unread, id)
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
	if ch, ok := h.waits[id]; ok {
		close(ch)
		delete(h.waits, id)
	}
	h.mu.Unlock()
	h.changes.Publish(id)
}

// Notify wakes the session's watchers as a commit here does: for commits
// another replica made to the shared store (a live-update feed calls it).
// A spurious call only makes watchers read the log again.
func (e *Engine) Notify(sessionID string) { e.hub.notify(sessionID) }

// Watcher collects the ids of sessions that got new events since it was
// last drained (Next, Take); Mark adds one as if it had changed (e.g. to
// retry a delivery). It never blocks a commit.
type Watcher = Feed[string]

// Watch starts collecting changed session ids; Close stops it.
func (e *Engine) Watch() *Watcher { return e.hub.changes.Subscribe(nil) }
