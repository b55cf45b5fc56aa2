package postgres

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/store/postgres/pgtest"
)

func openTest(t *testing.T, dsn string) *Store {
	t.Helper()
	st, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// commitMessage creates session id (if new) and appends a user.message.
func commitMessage(t *testing.T, st *Store, id string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Session(ctx, id); err != nil {
		if _, _, err := st.CreateSession(ctx, engine.Session{ID: id, Agent: "a", Origin: "api", Status: engine.StatusIdle, CreatedAt: now, UpdatedAt: now}, ""); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := json.Marshal(map[string]string{"text": "hi"})
	if _, err := st.Commit(ctx, engine.Commit{SessionID: id, Now: now, Events: []engine.Event{{ID: id + "-" + now.Format("150405.000000000"), Type: engine.EventUserMessage, Data: data}}}); err != nil {
		t.Fatal(err)
	}
}

// changeLog collects what Changes reports: session ids, and stop
// requests as "cancel <id>" or "interrupt <id>".
type changeLog struct {
	mu   sync.Mutex
	ids  []string
	wake chan struct{}
}

func (c *changeLog) addStop(id string, interrupt bool) {
	if interrupt {
		c.add("interrupt " + id)
	} else {
		c.add("cancel " + id)
	}
}

func (c *changeLog) add(id string) {
	c.mu.Lock()
	c.ids = append(c.ids, id)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *changeLog) waitFor(t *testing.T, id string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		c.mu.Lock()
		for _, got := range c.ids {
			if got == id {
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-deadline:
			t.Fatalf("%s never reported; got %v", id, c.ids)
		}
	}
}

// Commits through one handle (another replica) are reported to a
// listener on another, by NOTIFY.
func TestChanges_Notify(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	writer, reader := openTest(t, dsn), openTest(t, dsn)
	got := &changeLog{wake: make(chan struct{}, 1)}
	stops := &changeLog{wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	listening := make(chan struct{})
	var once sync.Once
	go func() {
		defer wg.Done()
		// An hour between polls: only NOTIFY can report in time.
		reader.changes(ctx, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)), store.Feed{Changed: got.add, StopTurn: stops.addStop}, func() { once.Do(func() { close(listening) }) })
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	<-listening
	commitMessage(t, writer, "ses_notified", time.Now())
	got.waitFor(t, "ses_notified")

	// Requests to stop a turn reach the listener too, each as sent.
	if err := writer.StopTurn(context.Background(), "ses_a", false); err != nil {
		t.Fatal(err)
	}
	if err := writer.StopTurn(context.Background(), "ses_b", true); err != nil {
		t.Fatal(err)
	}
	stops.waitFor(t, "cancel ses_a")
	stops.waitFor(t, "interrupt ses_b")
}

// The poll that stands in for NOTIFY reports each change once, including
// commits stamped by a clock somewhat behind this one.
func TestChanges_Poll(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	st := openTest(t, dsn)
	now := time.Now()
	p := &poller{store: st, seen: map[string]int64{}, since: now}
	var got []string
	add := func(id string) { got = append(got, id) }
	commitMessage(t, st, "ses_behind", now.Add(-2*time.Second))
	commitMessage(t, st, "ses_now", now)
	if err := p.pollOnce(context.Background(), add); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "ses_behind" || got[1] != "ses_now" {
		t.Fatalf("first poll reported %v", got)
	}
	got = nil
	if err := p.pollOnce(context.Background(), add); err != nil || len(got) != 0 {
		t.Fatalf("a poll without changes reported %v, %v", got, err)
	}
	commitMessage(t, st, "ses_now", now.Add(time.Millisecond))
	if err := p.pollOnce(context.Background(), add); err != nil || len(got) != 1 || got[0] != "ses_now" {
		t.Fatalf("after a new commit the poll reported %v, %v", got, err)
	}
}
