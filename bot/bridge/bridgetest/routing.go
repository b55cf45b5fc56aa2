// Package bridgetest is the suite every platform bridge runs: the routing
// of a thread's messages to its session, which bot/bridge's Router does
// for all of them (after adk-go's sessiontestsuite: one suite, a small
// harness per implementation). A bridge's own test calls RunRouting with a
// harness that sends a person's message through its inbound path.
package bridgetest

import (
	"context"
	"testing"

	"brain/engine"
)

// Harness is one platform's side of the suite.
type Harness struct {
	// Engine is the engine the bridge sends to (started or not).
	Engine interface {
		Session(ctx context.Context, id string) (engine.Session, error)
		Events(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error)
	}
	// Origin is the platform's session origin.
	Origin engine.Origin
	// Message has a person write text in thread (a name the harness maps
	// to a thread of its platform, "" for none yet: a new thread) through
	// the bridge's inbound path, worked to its end; eventKey identifies
	// the platform event, so sending it again is a redelivery. It returns
	// the thread's session key.
	Message func(t *testing.T, thread, eventKey, text string) (threadKey string)
	// SessionOf returns the session bound to threadKey.
	SessionOf func(t *testing.T, threadKey string) (engine.Session, bool)
}

// RunRouting runs the routing suite.
func RunRouting(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("FirstMessageStartsTheThreadsSession", func(t *testing.T) {
		h := newHarness(t)
		key := h.Message(t, "t1", "e1", "hello there")
		s, ok := h.SessionOf(t, key)
		if !ok {
			t.Fatalf("no session for thread %s", key)
		}
		if s.Origin != h.Origin || s.ThreadKey != key || !s.Interactive {
			t.Fatalf("session %+v; want origin %s, thread %s, interactive", s, h.Origin, key)
		}
		if got := inputs(t, h, s.ID); len(got) != 1 {
			t.Fatalf("inputs %v, want one", got)
		}
	})
	t.Run("LaterMessagesGoToTheSameSession", func(t *testing.T) {
		h := newHarness(t)
		key := h.Message(t, "t1", "e1", "first")
		first, _ := h.SessionOf(t, key)
		if again := h.Message(t, "t1", "e2", "second"); again != key {
			t.Fatalf("the thread's key changed: %s then %s", key, again)
		}
		s, _ := h.SessionOf(t, key)
		if s.ID != first.ID {
			t.Fatalf("a second session %s for the thread of %s", s.ID, first.ID)
		}
		if got := inputs(t, h, s.ID); len(got) != 2 {
			t.Fatalf("inputs %v, want two", got)
		}
	})
	t.Run("ARedeliveryIsSentOnce", func(t *testing.T) {
		h := newHarness(t)
		key := h.Message(t, "t1", "e1", "once")
		h.Message(t, "t1", "e1", "once")
		s, _ := h.SessionOf(t, key)
		if got := inputs(t, h, s.ID); len(got) != 1 {
			t.Fatalf("inputs %v, want one", got)
		}
	})
	t.Run("ThreadsHaveSessionsOfTheirOwn", func(t *testing.T) {
		h := newHarness(t)
		a, b := h.Message(t, "t1", "e1", "one"), h.Message(t, "t2", "e2", "two")
		sa, _ := h.SessionOf(t, a)
		sb, _ := h.SessionOf(t, b)
		if a == b || sa.ID == sb.ID {
			t.Fatalf("two threads share %s / session %s", a, sa.ID)
		}
	})
}

// inputs are the texts of the session's user messages.
func inputs(t *testing.T, h Harness, sessionID string) []string {
	t.Helper()
	evs, err := h.Engine.Events(context.Background(), sessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Type == engine.EventUserMessage {
			out = append(out, string(ev.Data))
		}
	}
	return out
}

// Agent is the agent a harness's engine runs, "default". A bridge may
// start a turn for what it sends even before the engine's Start; its model
// answers at once, so that turn ends with the session idle, and a later
// message of the same thread is never refused by a session the turn left
// interrupted.
func Agent() *engine.Agent { return &engine.Agent{Name: "default", Model: answers{}} }

type answers struct{}

func (answers) Generate(context.Context, engine.ModelRequest) (engine.ModelResponse, error) {
	return engine.ModelResponse{Text: "ok", StopReason: "end_turn"}, nil
}
