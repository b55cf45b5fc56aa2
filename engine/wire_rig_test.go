package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/tools"
)

// The rig of wireScenario: a scripted model, a store that can "crash", a
// deterministic clock and ids, and tools for every built-in behaviour.

// scripted is a Model that answers from a script. A step with hold waits
// for it to close (or the turn to be cancelled) and signals entered first.
type scripted struct {
	mu      sync.Mutex
	steps   []scriptStep
	entered chan struct{}
}

type scriptStep struct {
	resp engine.ModelResponse
	err  error
	hold chan struct{}
}

func (m *scripted) push(steps ...scriptStep) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

func (m *scripted) Generate(ctx context.Context, _ engine.ModelRequest) (engine.ModelResponse, error) {
	m.mu.Lock()
	if len(m.steps) == 0 {
		m.mu.Unlock()
		return engine.ModelResponse{}, errors.New("script exhausted")
	}
	s := m.steps[0]
	m.steps = m.steps[1:]
	m.mu.Unlock()
	if s.hold != nil {
		m.entered <- struct{}{}
		select {
		case <-s.hold:
		case <-ctx.Done():
			return engine.ModelResponse{}, ctx.Err()
		}
	}
	return s.resp, s.err
}

func say(text string, calls ...engine.ToolCall) scriptStep {
	return scriptStep{resp: engine.ModelResponse{Text: text, ToolCalls: calls, Usage: engine.Usage{InputTokens: 100, OutputTokens: int64(10 + len(calls))}}}
}

func call(id, name, input string) engine.ToolCall {
	return engine.ToolCall{ID: id, Name: name, Input: json.RawMessage(input)}
}

// crashable fails every write once dead is set, as if the process had died.
type crashable struct {
	engine.Store
	dead atomic.Bool
}

var errDead = errors.New("the process is dead")

func (c *crashable) Commit(ctx context.Context, cm engine.Commit) (engine.CommitResult, error) {
	if c.dead.Load() {
		return engine.CommitResult{}, errDead
	}
	return c.Store.Commit(ctx, cm)
}

func (c *crashable) CommitApproval(ctx context.Context, cm engine.ApprovalCommit) (engine.Approval, []engine.Event, error) {
	if c.dead.Load() {
		return engine.Approval{}, nil, errDead
	}
	return c.Store.CommitApproval(ctx, cm)
}

type wireRig struct {
	t     *testing.T
	store *crashable
	eng   *engine.Engine
	model *scripted
	agent *engine.Agent
	mu    sync.Mutex
	now   time.Time
	ids   int
	flaky atomic.Int64
	// crashed receives when the crash tool has killed the store.
	crashed chan struct{}
}

func (r *wireRig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = r.now.Add(time.Millisecond)
	return r.now
}

func (r *wireRig) newID(prefix string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids++
	return fmt.Sprintf("%s_%04d", prefix, r.ids)
}

func (r *wireRig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

func (r *wireRig) start() {
	r.t.Helper()
	eng, err := engine.New(engine.Config{
		Store: r.store, Agents: []*engine.Agent{r.agent}, Clock: r.clock, NewID: r.newID,
		ToolTimeout: 10 * time.Second, ExpirySweep: time.Hour,
		// One call at a time: the fixture's event order (a tool's progress
		// between results) must not depend on goroutine scheduling.
		MaxParallelTools: 1,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.eng = eng
}

func (r *wireRig) stop(ctx context.Context) {
	r.t.Helper()
	if err := r.eng.Stop(ctx); err != nil {
		r.t.Fatal(err)
	}
}

func (r *wireRig) restart() {
	r.t.Helper()
	r.stop(context.Background())
	r.store.dead.Store(false)
	r.start()
}

func (r *wireRig) send(id string, in engine.Input) engine.Event {
	r.t.Helper()
	ev, _, err := r.eng.Send(context.Background(), id, in)
	if err != nil {
		r.t.Fatalf("send %q: %v", in.Text, err)
	}
	return ev
}

func (r *wireRig) waitFor(id, what string, cond func(engine.Session, []engine.Event) bool) engine.Session {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		changed := r.eng.Changed(id)
		s, err := r.eng.Session(ctx, id)
		if err != nil {
			r.t.Fatal(err)
		}
		evs, err := r.eng.Events(ctx, id, 0, 0)
		if err != nil {
			r.t.Fatal(err)
		}
		if cond(s, evs) {
			return s
		}
		select {
		case <-changed:
		case <-ctx.Done():
			r.t.Fatalf("timed out waiting for %s; status %s, events:\n%s", what, s.Status, formatWire(evs))
		}
	}
}

func (r *wireRig) waitTurns(id string, n int) engine.Session {
	r.t.Helper()
	return r.waitFor(id, fmt.Sprintf("%d turns", n), func(s engine.Session, evs []engine.Event) bool {
		return s.Status != engine.StatusRunning && count(evs, engine.EventTurnCompleted) >= n
	})
}

func (r *wireRig) waitEvents(id, typ string, n int) {
	r.t.Helper()
	r.waitFor(id, fmt.Sprintf("%d %s", n, typ), func(_ engine.Session, evs []engine.Event) bool {
		return count(evs, typ) >= n
	})
}

func (r *wireRig) entered() {
	r.t.Helper()
	select {
	case <-r.model.entered:
	case <-time.After(20 * time.Second):
		r.t.Fatal("the model was not called")
	}
}

func (r *wireRig) pending(sessionID string) []engine.Approval {
	r.t.Helper()
	as, err := r.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: sessionID, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil {
		r.t.Fatal(err)
	}
	// Oldest first, so decisions follow the order of the proposals.
	for i, j := 0, len(as)-1; i < j; i, j = i+1, j-1 {
		as[i], as[j] = as[j], as[i]
	}
	return as
}

func (r *wireRig) decide(id string, approve bool) {
	r.t.Helper()
	if _, err := r.eng.Decide(context.Background(), id, engine.Decision{Approve: approve, By: "U1"}); err != nil {
		r.t.Fatalf("decide %s: %v", id, err)
	}
}

func (r *wireRig) resume(id string) {
	r.t.Helper()
	if _, err := r.eng.Resume(context.Background(), id); err != nil {
		r.t.Fatal(err)
	}
}

func (r *wireRig) tools() []tools.Definition {
	obj := json.RawMessage(`{"type":"object"}`)
	return []tools.Definition{
		addTool(new(atomic.Int64)),
		{
			Name: "fetch", Description: "Fetch a page", Input: obj,
			Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
				if err := c.ReportProgress(ctx, map[string]any{"phase": "downloading", "pct": 50}); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"ok": true, "note": "<b>bold</b> & more"}`), nil
			},
		},
		{
			Name: "report", Description: "Report the outcome", Result: true, Input: obj,
			Output: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`),
			Run:    func(_ context.Context, c tools.Call) (json.RawMessage, error) { return c.Input, nil },
		},
		{
			Name: "crash", Description: "Kill the process", Input: obj,
			Run: func(context.Context, tools.Call) (json.RawMessage, error) {
				r.store.dead.Store(true)
				r.crashed <- struct{}{}
				return json.RawMessage(`{}`), nil
			},
		},
		{
			Name: "ticket", Description: "Create a ticket",
			Input: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"mode":{"type":"string"}},"required":["title","mode"]}`),
			Preview: func(_ context.Context, c tools.Call) (tools.Card, error) {
				var in struct{ Title, Mode string }
				if err := json.Unmarshal(c.Input, &in); err != nil {
					return tools.Card{}, err
				}
				card := tools.Card{Title: "Create ticket " + in.Title}
				if in.Mode != "deny" {
					card.Facts = []tools.Fact{{Label: "Title", Value: in.Title}, {Label: "Mode", Value: in.Mode}}
				}
				return card, nil
			},
			Apply: func(_ context.Context, c tools.Call, d tools.Decision) (json.RawMessage, error) {
				var in struct{ Mode string }
				if err := json.Unmarshal(c.Input, &in); err != nil {
					return nil, err
				}
				switch in.Mode {
				case "empty":
					return nil, nil
				case "flaky":
					if r.flaky.Add(1) == 1 {
						return nil, tools.Failed("tracker refused: duplicate title")
					}
				case "unknown":
					return nil, tools.Unknown("tracker timed out after the request was sent")
				case "crash":
					r.store.dead.Store(true)
				}
				return json.RawMessage(`{"id": "T-1", "url": "https://t.example/1?a=1&b=2", "decision": "` + d.ID + `"}`), nil
			},
		},
	}
}
