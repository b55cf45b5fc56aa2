package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
)

// TestSlack_RateLimitDefersAFloodOfMentions: 200 mentions from one person
// at once through the Slack path with rate_limits.person_per_minute 50.
// Every one is acknowledged and recorded; those over the limit are told in
// their thread when they will run and run then (the clock is advanced),
// one every 1.2s of the limit's schedule; none is lost.
func TestSlack_RateLimitDefersAFloodOfMentions(t *testing.T) {
	const n, perMinute = 200, 50
	sa := newSlackAppWith(t, fmt.Sprintf("rate_limits: {person_per_minute: %d}\nlimits: {max_queued_turns: 512}\n", perMinute))
	threads := make([]string, n)
	for i := range threads {
		threads[i] = fmt.Sprintf("%d.000100", sa.nextTS.Add(1))
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				ev := map[string]any{"type": "app_mention", "user": "U1", "text": fmt.Sprintf("<@%s> job %d", slackfake.BotUserID, i),
					"ts": threads[i], "channel": "C1", "event_ts": threads[i]}
				body, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": slackfake.TeamID,
					"event_id": fmt.Sprintf("EvR%d", i), "event_time": 1, "event": ev})
				if st := sa.post("/slack/events", "application/json", body); st != 200 {
					t.Errorf("mention %d: status %d", i, st)
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Every mention is recorded; each deferred one says when it runs.
	runAt := make([]time.Time, n)
	deferred := 0
	for i, ts := range threads {
		s := sa.session(ts)
		in := firstInput(t, sa, s.ID)
		runAt[i] = in.RunAt
		if !in.RunAt.IsZero() {
			deferred++
			sa.waitThread(ts, "will run at "+in.RunAt.UTC().Format("15:04")+" UTC")
		}
	}
	if deferred < n-2*perMinute || deferred > n-perMinute {
		t.Fatalf("%d of %d mentions deferred; want about %d (a burst of %d runs at once)", deferred, n, n-perMinute, perMinute)
	}
	// Deferred turns are spaced by the limit: one every minute/50.
	var times []time.Time
	for _, at := range runAt {
		if !at.IsZero() {
			times = append(times, at)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d != time.Minute/perMinute {
			t.Fatalf("deferred turns %d and %d are %v apart; want %v", i-1, i, d, time.Minute/perMinute)
		}
	}
	// Those under the limit run now; the rest once the clock reaches their
	// time, never before it.
	for i, ts := range threads {
		if runAt[i].IsZero() {
			sa.waitThread(ts, fmt.Sprintf("echo: job %d", i))
		}
	}
	for times[len(times)-1].After(sa.clock.Now()) {
		sa.clock.Advance(time.Minute)
		now := sa.clock.Now()
		for i, ts := range threads {
			if !runAt[i].IsZero() && !runAt[i].After(now) {
				sa.waitThread(ts, fmt.Sprintf("echo: job %d", i))
			}
		}
	}
	for i, ts := range threads {
		s := sa.session(ts)
		started := turnStartedAt(t, sa, s.ID)
		if started.IsZero() || started.Before(runAt[i]) {
			t.Errorf("mention %d: turn started at %v; told it runs at %v", i, started, runAt[i])
		}
	}
	if got := sa.app.engine.Stats().Counters[engine.CounterDeferred]; got != int64(deferred) {
		t.Errorf("deferred counter = %d; want %d", got, deferred)
	}
}

// firstInput waits for the session's first user.message (the session is
// created a moment before its input is recorded).
func firstInput(t *testing.T, sa *slackApp, id string) engine.Input {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		evs, err := sa.app.store.Events(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if p, err := ev.Decode(); err == nil {
				if in, ok := p.(engine.Input); ok {
					return in
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("session %s has no input", id)
	return engine.Input{}
}

// turnStartedAt is when the session's first turn started (zero: never).
func turnStartedAt(t *testing.T, sa *slackApp, id string) time.Time {
	t.Helper()
	evs, err := sa.app.store.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventTurnStarted {
			return ev.CreatedAt
		}
	}
	return time.Time{}
}
