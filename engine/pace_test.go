package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// storePace is an engine.Pace of one turn per minute per session starter,
// drawing from the harness's store (as bot/governance does), so the
// bucket outlives the engine.
type storePace struct{ h *harness }

func (p storePace) Reserve(ctx context.Context, c engine.PaceCall) (time.Time, string, error) {
	at, err := p.h.store.ReserveTurn(ctx, c.Now, []store.RateLimit{{Key: "person:" + c.Session.StartedBy, PerMinute: 1}})
	return at, "slow down: runs at " + at.Format(time.RFC3339), err
}

func withPace(h *harness) harnessOption {
	return func(c *engine.Config, _ *engine.Agent) { c.Pace = storePace{h} }
}

// TestEngine_PacedInputWaitsAcrossARestart: over the limit, a message is
// recorded with its time and a notice, runs no turn before that time,
// waits through a restart, and runs once the time has come; the notice
// never reaches the model.
func TestEngine_PacedInputWaitsAcrossARestart(t *testing.T) {
	h := newHarness(t)
	h.close()
	h.open(withPace(h))
	first, second := h.session(), h.session()
	h.send(first.ID, "one")
	h.waitTurns(first.ID, 1)
	h.send(second.ID, "two")
	_, evs := h.waitFor(second.ID, "the notice", func(_ engine.Session, evs []engine.Event) bool {
		return count(evs, engine.EventAgentMessage) == 1
	})
	in := payload[engine.Input](t, ofType(evs, engine.EventUserMessage)[0])
	if in.RunAt.IsZero() || count(evs, engine.EventTurnStarted) != 0 {
		t.Fatalf("second message ran or has no time:\n%s", dump(evs))
	}
	if msg := payload[engine.AgentMessage](t, ofType(evs, engine.EventAgentMessage)[0]); !strings.Contains(msg.Text, "slow down") {
		t.Fatalf("notice = %q", msg.Text)
	}

	h.close()
	h.open(withPace(h)) // restart: the input is found queued and waits again
	if evs, _ := h.eng.Events(context.Background(), second.ID, 0, 0); count(evs, engine.EventTurnStarted) != 0 {
		t.Fatalf("deferred input ran at restart:\n%s", dump(evs))
	}
	h.mu.Lock()
	h.now = in.RunAt
	h.mu.Unlock()
	_, evs = h.waitTurns(second.ID, 1)
	if started := ofType(evs, engine.EventTurnStarted)[0].CreatedAt; started.Before(in.RunAt) {
		t.Errorf("turn started at %v, before its time %v", started, in.RunAt)
	}
	for _, r := range h.fake.Requests() {
		if strings.Contains(string(r.Messages), "slow down") {
			t.Errorf("the notice reached the model: %s", r.Messages)
		}
	}
}
