package engine

import "sync"

// hub wakes watchers of a session when events are committed to it. Each
// waiter gets a channel that is closed (and forgotten) at the next commit, so
// the map holds only sessions somebody is waiting on.
type hub struct {
	mu    sync.Mutex
	waits map[string]chan struct{}
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
}
