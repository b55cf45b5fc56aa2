package slackhook

import (
	"context"
	"strings"
	"sync"
	"testing"

	"brain/internal/threadkey"
)

// fakeInbox is an Inbox whose behaviour a test sets.
type fakeInbox struct {
	RecordFunc func(ctx context.Context, it Item) (bool, error)
}

func (f *fakeInbox) Record(ctx context.Context, it Item) (bool, error) {
	return f.RecordFunc(ctx, it)
}

// recorder is a fakeInbox that keeps what it records and dedupes like the
// real inbox must: an Item is a duplicate when any of its keys was seen.
type recorder struct {
	mu    sync.Mutex
	items []Item
	seen  map[string]bool
}

func newRecorder(t *testing.T) (*fakeInbox, *recorder) {
	t.Helper()
	rec := &recorder{seen: map[string]bool{}}
	return &fakeInbox{RecordFunc: rec.record}, rec
}

func (r *recorder) record(_ context.Context, it Item) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dup := false
	for _, k := range it.DedupeKeys {
		if r.seen[k] {
			dup = true
		}
		r.seen[k] = true
	}
	if !dup {
		r.items = append(r.items, it)
	}
	return dup, nil
}

func (r *recorder) Items() []Item {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Item(nil), r.items...)
}

// checkWellFormed fails the test unless the Item is usable by a consumer:
// a slack thread key, non-empty dedupe keys, the payload matching the kind.
func checkWellFormed(t testing.TB, it Item) {
	t.Helper()
	if !strings.HasPrefix(it.ThreadKey, "slack:") || strings.Count(it.ThreadKey, ":") != 3 {
		t.Fatalf("bad thread key %q", it.ThreadKey)
	}
	for _, part := range strings.Split(it.ThreadKey, ":") {
		if part == "" {
			t.Fatalf("thread key %q has an empty part", it.ThreadKey)
		}
	}
	if len(it.DedupeKeys) == 0 {
		t.Fatalf("no dedupe keys: %+v", it)
	}
	for _, k := range it.DedupeKeys {
		if k == "" || !strings.Contains(k, ":") {
			t.Fatalf("bad dedupe key %q", k)
		}
	}
	switch it.Kind() {
	case KindMessage:
		m := it.Message()
		if m == nil || it.Action() != nil || m.User == "" || m.TS == "" || m.ThreadTS == "" || m.Channel == "" || m.Team == "" {
			t.Fatalf("bad message item: %+v", it)
		}
		if it.ThreadKey != threadKey(m.Team, m.Channel, m.ThreadTS) {
			t.Fatalf("thread key %q does not match message %+v", it.ThreadKey, m)
		}
	case KindHome:
		h := it.Home()
		if h == nil || it.Message() != nil || it.Action() != nil || h.User == "" || it.ThreadKey != threadkey.SlackHome(h.Team, h.User) {
			t.Fatalf("bad home item: %+v", it)
		}
	case KindAction:
		a := it.Action()
		if a != nil && a.Home {
			if it.Message() != nil || a.User == "" || a.ActionID == "" || it.ThreadKey != threadkey.SlackHome(a.Team, a.User) {
				t.Fatalf("bad home action item: %+v", it)
			}
			return
		}
		if a == nil || it.Message() != nil || a.User == "" || a.MessageTS == "" || a.ThreadTS == "" || a.Channel == "" || a.ActionID == "" {
			t.Fatalf("bad action item: %+v", it)
		}
		if it.ThreadKey != threadKey(a.Team, a.Channel, a.ThreadTS) {
			t.Fatalf("thread key %q does not match action %+v", it.ThreadKey, a)
		}
	case KindSubmission:
		s := it.Submission()
		if s == nil || it.Action() != nil || it.Message() != nil || s.User == "" || s.ViewID == "" || s.CallbackID == "" ||
			len(s.Metadata) > maxMetadata || len(s.Values) > maxInputs {
			t.Fatalf("bad submission item: %+v", it)
		}
		if want := "view:" + s.ViewID + ":" + s.User; len(it.DedupeKeys) != 1 || it.DedupeKeys[0] != want {
			t.Fatalf("submission keys %v, want [%s]", it.DedupeKeys, want)
		}
	case KindStop, KindThreadStarted:
		a := it.Agent()
		if a == nil || it.Message() != nil || it.Action() != nil || a.User == "" || a.Channel == "" || a.ThreadTS == "" || a.Team == "" {
			t.Fatalf("bad agent item: %+v", it)
		}
		if it.ThreadKey != threadKey(a.Team, a.Channel, a.ThreadTS) || it.DedupeKeys[0] != "event:"+a.EventID {
			t.Fatalf("keys %q %v do not match %+v", it.ThreadKey, it.DedupeKeys, a)
		}
	default:
		t.Fatalf("bad kind %q", it.Kind())
	}
}
