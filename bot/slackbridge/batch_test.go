package slackbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"brain/bot/bridge"
	"brain/bot/bridge/bridgetest"
	"brain/channels/slack"
	"brain/engine"
	"brain/store"
	"brain/store/sqlite"
	"brain/webhooks/slackhook"
)

// mentionItem is an inbox item as the Slack intake records it: a mention
// starting thread root (ts == root) or replying in it.
func mentionItem(t *testing.T, root, ts string, mention bool) store.Inbound {
	t.Helper()
	m := slackhook.Message{EventType: "message", Team: "T1", Channel: "C1", ChannelType: "channel", User: "U1", Text: "hi " + ts, TS: ts, Mention: mention}
	if mention {
		m.EventType = "app_mention"
	}
	if ts != root {
		m.ThreadTS = root
	}
	key := slack.Thread{Team: "T1", Channel: "C1", TS: root}.Key()
	payload, err := json.Marshal(slackhook.Item{ThreadKey: key, DedupeKeys: []string{"msg:C1:" + ts}, Body: &m})
	if err != nil {
		t.Fatal(err)
	}
	return store.Inbound{Source: InboxSource, ThreadKey: key, Kind: "message", Payload: payload, DedupeKeys: []string{"msg:C1:" + ts}}
}

func threadKey(root string) string { return slack.Thread{Team: "T1", Channel: "C1", TS: root}.Key() }

// batchRig is a Slack bridge over the SQLite file at path, with an
// unstarted engine, as after a (re)start of brain.
func batchRig(t *testing.T, path string) (*Bridge, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := newRig(t)
	r.store = st
	if r.eng, err = engine.New(engine.Config{Store: st, Clock: time.Now, NewID: counter(), Agents: []*engine.Agent{bridgetest.Agent()}}); err != nil {
		t.Fatal(err)
	}
	return r.bridge(), st
}

// userMessages are the texts of a thread's session's user.message events.
func userMessages(t *testing.T, st *sqlite.Store, root string) []string {
	t.Helper()
	s, err := st.SessionByThread(context.Background(), threadKey(root))
	if err != nil {
		t.Fatalf("thread %s: %v", root, err)
	}
	evs, err := st.Events(context.Background(), s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Type != engine.EventUserMessage {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.(engine.Input).Text)
	}
	return out
}

func TestHandleBatch_StartsNewThreadsInOrder(t *testing.T) {
	b, st := batchRig(t, filepath.Join(t.TempDir(), "brain.db"))
	items := []store.Inbound{
		mentionItem(t, "1.1", "1.1", true),
		mentionItem(t, "1.2", "1.2", true),
		mentionItem(t, "1.3", "1.3", false), // a channel message for nobody
		mentionItem(t, "1.1", "1.4", true),  // a reply in a thread just started
		mentionItem(t, "1.5", "1.5", true),
	}
	errs := b.handleBatch(context.Background(), items)
	for i, err := range errs {
		if err != nil {
			t.Errorf("item %d: %v", i, err)
		}
	}
	if got := fmt.Sprint(userMessages(t, st, "1.1")); got != "[hi 1.1 hi 1.4]" {
		t.Errorf("thread 1.1 messages %s", got)
	}
	for _, root := range []string{"1.2", "1.5"} {
		if got := userMessages(t, st, root); len(got) != 1 {
			t.Errorf("thread %s messages %v", root, got)
		}
	}
	if _, err := st.SessionByThread(context.Background(), threadKey("1.3")); err == nil {
		t.Error("a channel message that mentions nobody started a session")
	}
}

// TestHandleBatch_CrashLosesNothingCreatesNothingTwice: brain dies after
// claiming a batch and before its sessions' transaction (nothing written),
// and again after that transaction but before the items' outcomes: each
// restart works the batch again, and each mention ends with exactly one
// session holding its message once.
func TestHandleBatch_CrashLosesNothingCreatesNothingTwice(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brain.db")
	var items []store.Inbound
	for i := range 30 {
		ts := fmt.Sprintf("2.%d", i+1)
		items = append(items, mentionItem(t, ts, ts, true))
	}
	claim := func(st *sqlite.Store) []store.Inbound {
		t.Helper()
		now := time.Now()
		got, err := st.ClaimInbound(ctx, InboxSource, "replica", now, now.Add(time.Minute), 50)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	// First life: the events are acknowledged, the batch claimed, and
	// brain dies before working it.
	_, st := batchRig(t, path)
	if _, err := st.RecordInbound(ctx, time.Now(), items); err != nil {
		t.Fatal(err)
	}
	if got := claim(st); len(got) != len(items) {
		t.Fatalf("claimed %d of %d", len(got), len(items))
	}
	st.Close()

	// Second life: the claim is this replica's, so the batch comes back;
	// its sessions commit, and brain dies before recording the outcomes.
	b, st := batchRig(t, path)
	batch := claim(st)
	if len(batch) != len(items) {
		t.Fatalf("after the first crash: claimed %d of %d", len(batch), len(items))
	}
	for i, err := range b.handleBatch(ctx, batch) {
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
	st.Close()

	// Third life: the batch is worked again and finds it all done.
	b, st = batchRig(t, path)
	batch = claim(st)
	if len(batch) != len(items) {
		t.Fatalf("after the second crash: claimed %d of %d", len(batch), len(items))
	}
	var done []store.Finished
	for i, err := range b.handleBatch(ctx, batch) {
		if err != nil {
			t.Fatalf("item %d again: %v", i, err)
		}
		done = append(done, store.Finished{ID: batch[i].ID})
	}
	if err := st.FinishInbound(ctx, time.Now(), done); err != nil {
		t.Fatal(err)
	}
	all, err := st.Sessions(ctx, engine.SessionFilter{})
	if err != nil || len(all) != len(items) {
		t.Fatalf("sessions: %v, %d, want %d", err, len(all), len(items))
	}
	for i := range items {
		root := fmt.Sprintf("2.%d", i+1)
		if got := userMessages(t, st, root); len(got) != 1 || got[0] != "hi "+root {
			t.Errorf("thread %s messages %v, want its message once", root, got)
		}
	}
}

// TestHandleBatch_FullQueueWaits: starts beyond the run queue's room wait
// in the inbox, and so does everything after them (a reply in a waiting
// thread must not go first).
func TestHandleBatch_FullQueueWaits(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := newRig(t)
	r.store = st
	if r.eng, err = engine.New(engine.Config{Store: st, Clock: time.Now, NewID: counter(), MaxQueuedTurns: 1,
		Agents: []*engine.Agent{bridgetest.Agent()}}); err != nil {
		t.Fatal(err)
	}
	errs := r.bridge().handleBatch(context.Background(), []store.Inbound{
		mentionItem(t, "3.1", "3.1", true),
		mentionItem(t, "3.2", "3.2", true),
		mentionItem(t, "3.2", "3.3", true),
		mentionItem(t, "3.4", "3.4", false),
	})
	if errs[0] != nil {
		t.Errorf("first start: %v", errs[0])
	}
	for i := 1; i < len(errs); i++ {
		if !errors.Is(errs[i], bridge.ErrRetryLater) {
			t.Errorf("item %d: %v, want ErrRetryLater", i, errs[i])
		}
	}
	if _, err := st.SessionByThread(context.Background(), threadKey("3.2")); err == nil {
		t.Error("a start beyond the queue's room created its session")
	}
}
