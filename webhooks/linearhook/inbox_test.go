package linearhook

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// fakeInbox is an Inbox whose behaviour a test sets.
type fakeInbox struct {
	RecordFunc func(ctx context.Context, it Item) (bool, error)
}

func (f *fakeInbox) Record(ctx context.Context, it Item) (bool, error) {
	return f.RecordFunc(ctx, it)
}

// recorder is a fakeInbox that keeps what it records and dedupes on
// DeliveryID like the real inbox must.
type recorder struct {
	mu    sync.Mutex
	items []Item
	seen  map[string]bool
}

func newRecorder(t testing.TB) (*fakeInbox, *recorder) {
	t.Helper()
	rec := &recorder{seen: map[string]bool{}}
	return &fakeInbox{RecordFunc: rec.record}, rec
}

func (r *recorder) record(_ context.Context, it Item) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[it.DeliveryID] {
		return true, nil
	}
	r.seen[it.DeliveryID] = true
	r.items = append(r.items, it)
	return false, nil
}

func (r *recorder) Items() []Item {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Item(nil), r.items...)
}

// checkWellFormed fails the test unless the Item is usable by a consumer.
func checkWellFormed(t testing.TB, it Item) {
	t.Helper()
	if it.Kind != KindCreated && it.Kind != KindPrompted {
		t.Fatalf("bad kind %q", it.Kind)
	}
	if !validID(it.SessionID) || it.ThreadKey != "linear:"+it.SessionID {
		t.Fatalf("bad session id %q / thread key %q", it.SessionID, it.ThreadKey)
	}
	if it.DeliveryID == "" || !strings.Contains(it.EventKey, ":") || !strings.HasPrefix(it.EventKey, it.Kind+":") {
		t.Fatalf("bad keys: delivery %q event %q", it.DeliveryID, it.EventKey)
	}
	switch it.Kind {
	case KindCreated:
		if it.ActivityID != "" || it.Stop || it.EventKey != "created:"+it.SessionID {
			t.Fatalf("bad created item %+v", it)
		}
	case KindPrompted:
		if !validID(it.ActivityID) || it.EventKey != "prompted:"+it.ActivityID || (it.Text == "" && !it.Stop) {
			t.Fatalf("bad prompted item %+v", it)
		}
		if it.Context != "" || len(it.PreviousComments) != 0 {
			t.Fatalf("prompted item with created-only fields %+v", it)
		}
	}
}
