package engine_test

import (
	"context"
	"errors"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// TestEngine_StopFor: only the session's person (or an approver) may stop
// it; a stop cancels the running turn like Cancel, and a second finds
// nothing to stop.
func TestEngine_StopFor(t *testing.T) {
	h := newHarness(t, func(_ *engine.Config, a *engine.Agent) { a.Approvers = []string{"boss"} })
	ctx := context.Background()
	s, _, err := h.eng.CreateSession(ctx, engine.NewSession{Agent: "default", Origin: engine.OriginAPI, Interactive: true, StartedBy: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	h.fake.Push(fakemodel.Hold())
	h.send(s.ID, "slow")
	if _, err := h.fake.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var ee *engine.Error
	if _, stopped, err := h.eng.StopFor(ctx, s.ID, "mallory"); stopped || !errors.As(err, &ee) || ee.Code != engine.CodeForbidden {
		t.Fatalf("a stranger's stop: %v, %v", stopped, err)
	}
	if _, stopped, err := h.eng.StopFor(ctx, s.ID, "boss"); !stopped || err != nil {
		t.Fatalf("the approver's stop: %v, %v", stopped, err)
	}
	_, evs := h.waitTurns(s.ID, 1)
	if count(evs, engine.EventTurnCompleted) != 1 {
		t.Fatalf("events %v", evs)
	}
	if _, stopped, err := h.eng.StopFor(ctx, s.ID, "ann"); stopped || err != nil {
		t.Fatalf("a second stop: %v, %v", stopped, err)
	}
}
