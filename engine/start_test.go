package engine_test

import (
	"context"
	"errors"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// TestEngine_StartSessions: new sessions are created with their context
// and first input and their turns run; a start whose thread is bound
// sends its input to that session; an invalid start fails alone; the same
// starts again (their outcomes lost in a crash) create and record nothing
// twice.
func TestEngine_StartSessions(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.fake.Push(fakemodel.Text("one"), fakemodel.Text("two"), fakemodel.Text("three"))
	bound, _, err := h.eng.CreateSession(ctx, engine.NewSession{Agent: "default", Origin: engine.OriginSlack, ThreadKey: "t-bound", Interactive: true, StartedBy: "U1"})
	if err != nil {
		t.Fatal(err)
	}
	start := func(thread, text, note string) engine.Start {
		return engine.Start{
			Session: engine.NewSession{Agent: "default", Origin: engine.OriginSlack, ThreadKey: thread, Interactive: true, StartedBy: "U1", Context: note},
			Input:   engine.Input{Text: text, Author: "U1", IdempotencyKey: "slack:" + thread},
		}
	}
	starts := []engine.Start{start("t1", "first", "a note"), start("t-bound", "to the bound one", ""), start("t2", "  ", ""), start("t3", "third", "")}
	out := h.eng.StartSessions(ctx, starts)
	if len(out) != len(starts) {
		t.Fatalf("%d outcomes", len(out))
	}
	if o := out[0]; o.Err != nil || !o.Created || o.Event.Type != engine.EventUserMessage {
		t.Fatalf("start t1: %+v", o)
	}
	if o := out[1]; o.Err != nil || o.Created || o.Session.ID != bound.ID || o.Event.Type != engine.EventUserMessage {
		t.Fatalf("start on the bound thread: %+v", o)
	}
	if o := out[2]; !errors.Is(o.Err, engine.ErrInvalid) {
		t.Fatalf("start without text: %+v", o)
	}
	if o := out[3]; o.Err != nil || !o.Created {
		t.Fatalf("start t3: %+v", o)
	}
	_, evs := h.waitTurns(out[0].Session.ID, 1)
	if len(evs) < 2 || evs[0].Type != engine.EventSessionContext || evs[1].Type != engine.EventUserMessage {
		t.Fatalf("t1 log:\n%s", dump(evs))
	}
	h.waitTurns(bound.ID, 1)
	h.waitTurns(out[3].Session.ID, 1)

	again := h.eng.StartSessions(ctx, []engine.Start{starts[0], starts[3]})
	for i, o := range again {
		if o.Err != nil || o.Created {
			t.Fatalf("repeat %d: %+v", i, o)
		}
	}
	if again[0].Event.ID != out[0].Event.ID {
		t.Errorf("repeat recorded %s, want the first input %s", again[0].Event.ID, out[0].Event.ID)
	}
	for _, id := range []string{out[0].Session.ID, out[3].Session.ID} {
		evs, err := h.eng.Events(ctx, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(evs, engine.EventUserMessage); n != 1 {
			t.Errorf("session %s has %d inputs, want 1", id, n)
		}
	}
}
