package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// retentionFixture makes sessions with n messages each, last active at
// the given times; "run" is running (never pruned, however old).
func retentionFixture(t *testing.T, st store.Store, sessions map[string]time.Time, n int) {
	t.Helper()
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range sessions {
			if !yield(id) {
				return
			}
		}
	}) {
		s := Session(id, sessions[id])
		s.ThreadKey = "slack:T:C:" + id
		if id == "run" {
			s.Status = engine.StatusRunning
		}
		CreateSession(t, st, s)
		var evs []engine.Event
		for j := range n {
			data, _ := json.Marshal(map[string]string{"text": "word" + id, "author": "U123"})
			evs = append(evs, engine.Event{ID: EventID(id, j), Type: engine.EventUserMessage, Data: data})
		}
		Commit(t, st, engine.Commit{SessionID: id, Now: sessions[id], Events: evs, InputKey: "k-" + id,
			Result: &engine.ResultRecord{TurnID: "t", CallID: "c", ReportedAt: sessions[id], Data: json.RawMessage(`{"ok":true}`)}})
	}
}

// testPruneSessions: expired sessions go in batches of events, oldest
// first, with their search rows, results and thread binding; a running
// or recent session stays, and a thread freed can start a new session.
func testPruneSessions(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	retentionFixture(t, st, map[string]time.Time{
		"old1": T0, "old2": T0.Add(time.Hour), "new": T0.Add(48 * time.Hour), "run": T0.Add(-time.Hour),
	}, 3)
	cut := T0.Add(24 * time.Hour)
	var batches []store.SessionsPruned
	for range 5 {
		b, err := st.PruneSessions(ctx, cut, 4)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
		if b.Events == 0 {
			break
		}
	}
	// old1 (3 events) and one of old2 fit the first batch; the rest of
	// old2 the second; then nothing.
	want := []store.SessionsPruned{{Sessions: []string{"old1"}, Events: 4}, {Sessions: []string{"old2"}, Events: 2}, {Events: 0}}
	if len(batches) != len(want) {
		t.Fatalf("batches = %+v, want %+v", batches, want)
	}
	for i := range want {
		if !slices.Equal(batches[i].Sessions, want[i].Sessions) || batches[i].Events != want[i].Events {
			t.Errorf("batch %d = %+v, want %+v", i, batches[i], want[i])
		}
	}
	for _, id := range []string{"old1", "old2"} {
		if _, err := st.Session(ctx, id); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("Session(%s) after pruning: %v, want not found", id, err)
		}
		if _, err := st.SessionByThread(ctx, "slack:T:C:"+id); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("SessionByThread(%s) after pruning: %v, want not found", id, err)
		}
		got, _, err := st.ListSessions(ctx, store.SessionQuery{Text: "word" + id})
		if err != nil || len(got) != 0 {
			t.Errorf("search for %s's words = %v, %v; want nothing", id, sessionIDs(got), err)
		}
	}
	for _, id := range []string{"new", "run"} {
		evs, err := st.Events(ctx, id, 0, 0)
		if err != nil || len(evs) != 3 {
			t.Errorf("Events(%s) = %d, %v; want its 3 kept", id, len(evs), err)
		}
	}
	// The thread is free again, and the input key gone with its session.
	s := Session("again", cut)
	s.ThreadKey = "slack:T:C:old1"
	CreateSession(t, st, s)
	Commit(t, st, engine.Commit{SessionID: "again", Now: cut, Events: []engine.Event{userMessage("again-1", "hi")}, InputKey: "k-old1"})
	got, _, err := st.ListSessions(ctx, store.SessionQuery{})
	if err != nil || !slices.Equal(sessionIDs(got), []string{"new", "again", "run"}) {
		t.Errorf("sessions left = %v, %v", sessionIDs(got), err)
	}
	// A session's CreateSession key goes with it (found by its ref, an
	// index since 0024): the key makes a new session again.
	keyed := Session("keyed", T0)
	if _, _, err := st.CreateSession(ctx, keyed, "create-key"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PruneSessions(ctx, cut, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SessionByKey(ctx, "create-key"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("SessionByKey after its session went = %v, want not found", err)
	}
	if got, created, err := st.CreateSession(ctx, Session("keyed2", cut), "create-key"); err != nil || !created || got.ID != "keyed2" {
		t.Errorf("CreateSession with the freed key = %s, created %v, %v; want a new session", got.ID, created, err)
	}
	if _, _, err := st.Compact(ctx, 0); err != nil {
		t.Errorf("Compact: %v", err)
	}
}

// testEraseAuthor: one person's messages in shared sessions become the
// marker (files and answers dropped), the others' stay, search forgets
// their words, and their memory scope goes.
func testEraseAuthor(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("shared", T0))
	msg := func(id, author, text string, extra map[string]any) engine.Event {
		m := map[string]any{"text": text, "author": author}
		for k, v := range extra {
			m[k] = v
		}
		data, _ := json.Marshal(m)
		return engine.Event{ID: id, Type: engine.EventUserMessage, Data: data}
	}
	hash := strings.Repeat("ab", 32)
	Commit(t, st, engine.Commit{SessionID: "shared", Events: []engine.Event{
		msg("e1", "UALICE", "alice secret plan", map[string]any{"files": []engine.FileRef{{Hash: hash, Name: "plan.pdf", Size: 3}}}),
		msg("e2", "UBOB", "bob keeps this", nil),
		msg("e3", "UALICE", "alice answers", map[string]any{"answer": map[string]string{"question_id": "q1", "value": "yes", "text": "alice says yes"}}),
	}})
	if err := st.CommitMemory(ctx, store.MemoryCommit{Scope: "person:slack:UALICE", Now: T0, Writes: []store.MemoryWrite{{Path: "notes.md", Content: "alice likes tea"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.EraseAuthor(ctx, []string{"UALICE"}, "[erased]")
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages != 2 || got.Sessions != 1 || !slices.Equal(got.Files, []string{hash}) {
		t.Errorf("EraseAuthor = %+v; want 2 messages of 1 session and the file", got)
	}
	evs, err := st.Events(ctx, "shared", 0, 0)
	if err != nil || len(evs) != 3 {
		t.Fatalf("events = %d, %v; want all 3 kept", len(evs), err)
	}
	for _, ev := range evs {
		s := string(ev.Data)
		if strings.Contains(s, "alice") || strings.Contains(s, "plan.pdf") || strings.Contains(s, `"yes"`) {
			t.Errorf("event %s still holds Alice's words: %s", ev.ID, s)
		}
	}
	if !strings.Contains(string(evs[1].Data), "bob keeps this") || !strings.Contains(string(evs[0].Data), "[erased]") {
		t.Errorf("events after erasure = %s | %s", evs[0].Data, evs[1].Data)
	}
	for word, want := range map[string][]string{"secret": nil, "bob": {"shared"}, "erased": {"shared"}} {
		ss, _, err := st.ListSessions(ctx, store.SessionQuery{Text: word})
		if err != nil || !slices.Equal(sessionIDs(ss), want) {
			t.Errorf("search %q = %v, %v; want %v", word, sessionIDs(ss), err, want)
		}
	}
	if ss, _, _ := st.ListSessions(ctx, store.SessionQuery{Person: "UALICE"}); len(ss) != 0 {
		t.Errorf("sessions Alice took part in = %v; want none indexed", sessionIDs(ss))
	}
	n, err := st.EraseMemoryScopes(ctx, []string{"person:slack:UALICE"})
	if err != nil || n != 1 {
		t.Errorf("EraseMemoryScopes = %d, %v; want 1", n, err)
	}
	if files, err := st.MemoryFiles(ctx, "person:slack:UALICE"); err != nil || len(files) != 0 {
		t.Errorf("memory left = %v, %v", files, err)
	}
	// Nothing of theirs: a second erasure changes nothing.
	if again, err := st.EraseAuthor(ctx, []string{"UALICE"}, "[erased]"); err != nil || again.Messages != 0 {
		t.Errorf("second EraseAuthor = %+v, %v", again, err)
	}
}
