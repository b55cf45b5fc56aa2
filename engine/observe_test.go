package engine_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// recordingObserver is an engine.Observer that keeps what it was told.
type recordingObserver struct {
	mu      sync.Mutex
	started []engine.TurnInfo
	ended   []engine.TurnEnd
	tools   []engine.ToolReturn
}

var _ engine.Observer = (*recordingObserver)(nil)

func (o *recordingObserver) TurnStarted(t engine.TurnInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started = append(o.started, t)
}

func (o *recordingObserver) TurnEnded(t engine.TurnInfo, e engine.TurnEnd) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, e)
}

func (o *recordingObserver) ToolReturned(t engine.TurnInfo, r engine.ToolReturn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tools = append(o.tools, r)
}

func (o *recordingObserver) endedCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ended)
}

func withObserver(o engine.Observer) harnessOption {
	return func(c *engine.Config, _ *engine.Agent) { c.Observer = o }
}

func TestEngine_ObserverSeesTurnsAndToolCalls(t *testing.T) {
	var calls atomic.Int64
	obs := &recordingObserver{}
	h := newHarness(t, withTools(addTool(&calls)), withObserver(obs))
	h.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "add", Input: `{"a":1,"b":2}`}, fakemodel.Call{Name: "nope", Input: `{}`}),
		fakemodel.Text("3"),
		fakemodel.Fail(401, "invalid x-api-key"),
	)
	s := h.session()
	h.send(s.ID, "add 1 and 2")
	h.waitTurns(s.ID, 1)
	h.send(s.ID, "again")
	h.waitFor(s.ID, "failed", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusFailed })

	// The observer hears of a step just after it is committed.
	deadline := time.Now().Add(5 * time.Second)
	for obs.endedCount() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.started) != 2 || obs.started[0].SessionID != s.ID || obs.started[0].Origin != engine.OriginAPI || obs.started[0].Agent != "default" || obs.started[0].Inputs != 1 {
		t.Fatalf("started %+v", obs.started)
	}
	if len(obs.ended) != 2 {
		t.Fatalf("ended %+v", obs.ended)
	}
	if e := obs.ended[0]; e.Outcome != engine.OutcomeCompleted || e.Rounds != 1 || e.Duration <= 0 || e.Usage.OutputTokens == 0 {
		t.Errorf("first turn %+v", e)
	}
	if e := obs.ended[1]; e.Outcome != engine.OutcomeFailed || e.Code == "" {
		t.Errorf("failed turn %+v", e)
	}
	if len(obs.tools) != 2 || obs.tools[0].Tool != "add" || !obs.tools[0].Offered || obs.tools[0].IsError || obs.tools[0].Duration <= 0 ||
		obs.tools[1].Tool != "nope" || obs.tools[1].Offered || !obs.tools[1].IsError || obs.tools[1].Text == "" {
		t.Fatalf("tools %+v", obs.tools)
	}
}
