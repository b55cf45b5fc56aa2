package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

// collect reads a feed until the joined text of the session's round holds
// want, or fails after a generous bound.
func collect(t *testing.T, f *engine.DeltaFeed, want string) []engine.Delta {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var all []engine.Delta
	var b strings.Builder
	for !strings.Contains(b.String(), want) {
		ds, err := f.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v (have %q)", want, err, b.String())
		}
		for _, d := range ds {
			b.WriteString(d.Text)
		}
		all = append(all, ds...)
	}
	return all
}

// TestEngine_DeltasReachWatchersBeforeTheAnswer: a watcher of the session
// gets the first words while the model still writes; the deltas add up to
// the recorded agent.message, which alone is stored; the log holds no
// delta.
func TestEngine_DeltasReachWatchersBeforeTheAnswer(t *testing.T) {
	h := newHarness(t)
	s := h.session()
	feed := h.eng.WatchDeltas(s.ID)
	defer feed.Close()
	other := h.eng.WatchDeltas("someone-else")
	defer other.Close()

	pause := make(chan struct{})
	const text = "First words, then the rest of a long answer."
	h.fake.Push(fakemodel.Text(text).Slowly(6, 0).PauseAfter(2, pause))
	h.send(s.ID, "talk")
	early := collect(t, feed, "First words,")
	if got := early[0]; got.SessionID != s.ID || got.TurnID == "" || got.Round != 0 {
		t.Errorf("delta = %+v, want the session's first round", got)
	}
	// The model is paused: nothing is recorded yet.
	if evs, _ := h.eng.Events(context.Background(), s.ID, 0, 0); count(evs, engine.EventAgentMessage) != 0 {
		t.Fatalf("agent.message recorded before the model finished")
	}
	close(pause)
	_, evs := h.waitTurns(s.ID, 1)
	rest := feed.Take()
	var b strings.Builder
	for _, d := range append(early, rest...) {
		b.WriteString(d.Text)
	}
	if b.String() != text {
		t.Errorf("deltas add up to %q, want %q", b.String(), text)
	}
	if count(evs, engine.EventAgentMessage) != 1 {
		t.Errorf("want one agent.message, events %v", evs)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventAgentMessageDelta {
			t.Errorf("a delta was stored: %+v", ev)
		}
	}
	if ds := other.Take(); len(ds) != 0 {
		t.Errorf("a feed of another session got %+v", ds)
	}
}

// TestEngine_DeltasAreScrubbed: a secret the model streams in pieces, split
// across deltas, never leaves the engine; the streamed text still matches
// the recorded (scrubbed) answer.
func TestEngine_DeltasAreScrubbed(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	h := newHarness(t, func(c *engine.Config, _ *engine.Agent) { c.Scrubber = tools.NewScrubber(secret) })
	s := h.session()
	feed := h.eng.WatchDeltas("")
	defer feed.Close()
	h.fake.Push(fakemodel.Text("The key is "+secret+", keep it safe.").Slowly(3, 0))
	h.send(s.ID, "leak")
	_, evs := h.waitTurns(s.ID, 1)
	var b strings.Builder
	for _, d := range feed.Take() {
		if strings.Contains(d.Text, secret[:6]) {
			t.Errorf("delta %q holds part of the secret", d.Text)
		}
		b.WriteString(d.Text)
	}
	want := "The key is " + tools.Redacted + ", keep it safe."
	if b.String() != want {
		t.Errorf("streamed %q, want %q", b.String(), want)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventAgentMessage && !strings.Contains(string(ev.Data), tools.Redacted) {
			t.Errorf("agent.message %s not scrubbed", ev.Data)
		}
	}
}
