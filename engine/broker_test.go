package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// A feed gets what its filter keeps, from its subscription to its Close,
// folded by the broker's rule; a publish never waits for a reader.
func TestBroker_FeedsKeepWhatTheyAskFor(t *testing.T) {
	b := NewBroker(addID)
	all := b.Subscribe(nil)
	defer all.Close()
	odd := b.Subscribe(func(id string) bool { return strings.HasSuffix(id, "1") })
	if !b.Wanted("s2") || !b.Wanted("x") {
		t.Fatal("a feed without a filter wants everything")
	}
	for _, id := range []string{"s1", "s2", "s1", "s3"} {
		b.Publish(id)
	}
	if got := all.Take(); !slices.Equal(got, []string{"s1", "s2", "s3"}) {
		t.Fatalf("all = %v, want each id once, in order", got)
	}
	if got := all.Take(); got != nil {
		t.Fatalf("a second Take = %v, want nothing", got)
	}
	odd.Mark("s9")
	got, err := odd.Next(context.Background())
	if err != nil || !slices.Equal(got, []string{"s1", "s9"}) {
		t.Fatalf("odd = %v, %v; want [s1 s9]", got, err)
	}
	odd.Close()
	b.Publish("s11")
	if got := odd.Take(); got != nil {
		t.Fatalf("a closed feed got %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := odd.Next(ctx); err != context.Canceled {
		t.Fatalf("Next on a cancelled context = %v", err)
	}
}

// Next wakes when an item is published while it waits.
func TestBroker_NextWakes(t *testing.T) {
	b := NewBroker[string](nil)
	f := b.Subscribe(nil)
	defer f.Close()
	got := make(chan []string)
	go func() {
		ids, _ := f.Next(context.Background())
		got <- ids
	}()
	b.Publish("s1")
	if ids := <-got; len(ids) == 0 || ids[0] != "s1" {
		t.Fatalf("Next = %v", ids)
	}
}

// A nil broker (an engine built without New in a test) has no feeds.
func TestBroker_NilHasNoFeeds(t *testing.T) {
	var b *Broker[Delta]
	b.Publish(Delta{Text: "x"})
	if b.Wanted(Delta{}) {
		t.Fatal("a nil broker wants deltas")
	}
}

// Deltas of one round merge; past maxFeedBytes unread they are dropped.
func TestAddDelta(t *testing.T) {
	d := func(turn string, round int, text string) Delta {
		return Delta{SessionID: "s1", TurnID: turn, Round: round, Text: text}
	}
	var unread []Delta
	for _, x := range []Delta{d("t1", 0, "Hel"), d("t1", 0, "lo"), d("t1", 1, "!"), d("t2", 0, "x")} {
		unread = addDelta(unread, x)
	}
	want := []Delta{d("t1", 0, "Hello"), d("t1", 1, "!"), d("t2", 0, "x")}
	if !slices.Equal(unread, want) {
		t.Fatalf("unread = %+v, want %+v", unread, want)
	}
	big := strings.Repeat("a", maxFeedBytes)
	if got := addDelta(unread, d("t2", 0, big)); !slices.Equal(got, want) {
		t.Fatal("a delta past the bound was kept")
	}
	if got := addDelta(nil, d("t3", 0, big)); len(got) != 1 {
		t.Fatal("a delta of exactly the bound was dropped")
	}
}
