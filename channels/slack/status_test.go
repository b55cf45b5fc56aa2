package slack

import (
	"testing"
	"time"
)

func TestPoster_StatusAssistant(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	if err := p.SetStatus(ctx, testChannel, testThread, "searching the web…"); err != nil {
		t.Fatal(err)
	}
	if got := fake.Status(testChannel, testThread); got != "searching the web…" {
		t.Errorf("assistant status = %q", got)
	}
	if err := p.ClearStatus(ctx, testChannel, testThread); err != nil {
		t.Fatal(err)
	}
	if got := fake.Status(testChannel, testThread); got != "" {
		t.Errorf("status after clear = %q", got)
	}
	if n := len(fake.Messages(testChannel)); n != 0 {
		t.Errorf("%d messages posted, want none", n)
	}
}

func TestPoster_StatusFallbackThrottled(t *testing.T) {
	clock := newFakeClock()
	p, fake := newPoster(t, WithClock(clock), WithStatusInterval(time.Second))
	ctx := testCtx(t)
	fake.Fail("assistant.threads.setStatus", -1, "not_allowed")

	set := func(text string) {
		t.Helper()
		if err := p.SetStatus(ctx, testChannel, testThread, text); err != nil {
			t.Fatalf("SetStatus(%q): %v", text, err)
		}
	}
	shown := func(wantText string, wantUpdates int) {
		t.Helper()
		msgs := fake.Thread(testChannel, testThread)
		if len(msgs) != 1 {
			t.Fatalf("%d status messages, want 1", len(msgs))
		}
		if msgs[0].Text != wantText || msgs[0].Updates != wantUpdates {
			t.Errorf("status message %q after %d updates, want %q after %d", msgs[0].Text, msgs[0].Updates, wantText, wantUpdates)
		}
	}

	set("thinking <deeply>")
	shown("thinking &lt;deeply&gt;", 0)

	// Inside the interval: nothing is sent, the latest text is kept.
	clock.Advance(200 * time.Millisecond)
	set("running web_search")
	set("running web_fetch")
	shown("thinking &lt;deeply&gt;", 0)
	if clock.pending() != 1 {
		t.Fatalf("%d pending timers, want 1", clock.pending())
	}

	// The trailing update shows the latest text once the interval is over.
	clock.Advance(800 * time.Millisecond)
	shown("running web_fetch", 1)

	// After the interval an update goes out at once.
	clock.Advance(2 * time.Second)
	set("writing the answer")
	shown("writing the answer", 2)

	// The same text again sends nothing.
	set("writing the answer")
	shown("writing the answer", 2)

	// The fallback is permanent: the assistant API was asked once.
	if n := len(fake.Calls("assistant.threads.setStatus")); n != 1 {
		t.Errorf("assistant.threads.setStatus called %d times, want 1", n)
	}

	// Clear deletes the message and drops a pending update.
	clock.Advance(100 * time.Millisecond)
	set("almost done")
	if err := p.ClearStatus(ctx, testChannel, testThread); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	if msgs := fake.Thread(testChannel, testThread); len(msgs) != 0 {
		t.Errorf("status message left after clear: %+v", msgs)
	}
	if n := len(fake.Calls("assistant.threads.setStatus")); n != 1 {
		t.Errorf("clear asked the assistant API again (%d calls)", n)
	}

	// A new turn gets a new status message.
	set("again")
	if msgs := fake.Thread(testChannel, testThread); len(msgs) != 1 || msgs[0].Text != "again" {
		t.Errorf("new status = %+v", msgs)
	}
}

func TestPoster_StatusFallbackPerChannel(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	fake.Fail("assistant.threads.setStatus", 1, "missing_scope")
	if err := p.SetStatus(ctx, "C1", testThread, "a"); err != nil {
		t.Fatal(err)
	}
	if err := p.SetStatus(ctx, "C2", testThread, "b"); err != nil {
		t.Fatal(err)
	}
	if len(fake.Messages("C1")) != 1 || len(fake.Messages("C2")) != 0 || fake.Status("C2", testThread) != "b" {
		t.Errorf("C1 messages %d, C2 messages %d, C2 status %q", len(fake.Messages("C1")), len(fake.Messages("C2")), fake.Status("C2", testThread))
	}
}
