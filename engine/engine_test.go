package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

func TestEngine_MultiRoundToolTurn(t *testing.T) {
	var calls atomic.Int64
	h := newHarness(t, withTools(addTool(&calls)))
	h.fake.Push(
		fakemodel.TextAndTools("Adding.", fakemodel.Call{ID: "toolu_1", Name: "add", Input: `{"a":1,"b":2}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_2", Name: "add", Input: `{"a":3,"b":4}`}),
		fakemodel.Text("The sums are 3 and 7."),
	)
	s := h.session()
	in := h.send(s.ID, "add some numbers")
	s, evs := h.waitTurns(s.ID, 1)

	if s.Status != engine.StatusIdle || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("status %s outcome %s\n%s", s.Status, outcome(t, evs), dump(evs))
	}
	if calls.Load() != 2 {
		t.Fatalf("tool ran %d times, want 2", calls.Load())
	}
	want := []string{"user.message", "turn.started", "session.status", "agent.message", "tool.call", "tool.result",
		"tool.call", "tool.result", "agent.message", "turn.completed", "session.status"}
	var got []string
	for i, ev := range evs {
		got = append(got, ev.Type)
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	rs := results(t, evs)
	if rs[1].ProviderCallID != "toolu_2" || rs[1].CallID == "toolu_2" || rs[1].Result.Content[0].Text != `{"sum":7}` || rs[1].Result.IsError {
		t.Fatalf("second result: %+v", rs[1])
	}
	if evs[0].ID != in.ID {
		t.Fatalf("first event is not the input")
	}
	// The third model request carries both rounds' calls and results.
	reqs := h.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model called %d times", len(reqs))
	}
	last := string(reqs[2].Raw)
	for _, want := range []string{`"tool_use_id":"toolu_1"`, `"tool_use_id":"toolu_2"`, `{\"sum\":7}`, "add some numbers", "You are a test agent."} {
		if !strings.Contains(last, want) {
			t.Errorf("third request lacks %s: %s", want, last)
		}
	}
	if !strings.Contains(string(reqs[0].Raw), `"name":"add"`) {
		t.Errorf("tools not offered: %s", reqs[0].Raw)
	}
}

func TestEngine_MaxToolIterations(t *testing.T) {
	var calls atomic.Int64
	h := newHarness(t, withTools(addTool(&calls)), func(_ *engine.Config, a *engine.Agent) { a.MaxToolIterations = 3 })
	h.fake.SetDefault(fakemodel.ToolCalls(fakemodel.Call{Name: "add", Input: `{"a":1,"b":1}`}))
	s := h.session()
	h.send(s.ID, "loop forever")
	s, evs := h.waitTurns(s.ID, 1)
	if got := outcome(t, evs); got != engine.OutcomeMaxIterations {
		t.Fatalf("outcome %s", got)
	}
	if calls.Load() != 3 || h.fake.Received() != 3 {
		t.Fatalf("tool ran %d times, model called %d times; want 3 and 3", calls.Load(), h.fake.Received())
	}
	if s.Status != engine.StatusIdle {
		t.Fatalf("status %s", s.Status)
	}
}

func TestEngine_DefaultMaxToolIterationsIsFive(t *testing.T) {
	var calls atomic.Int64
	h := newHarness(t, withTools(addTool(&calls)))
	h.fake.SetDefault(fakemodel.ToolCalls(fakemodel.Call{Name: "add", Input: `{"a":1,"b":1}`}))
	s := h.session()
	h.send(s.ID, "loop")
	h.waitTurns(s.ID, 1)
	if calls.Load() != 5 {
		t.Fatalf("tool ran %d times, want 5", calls.Load())
	}
}

func TestEngine_QueuedInputRunsTogetherInNextTurn(t *testing.T) {
	h := newHarness(t)
	h.fake.Push(fakemodel.Hold(), fakemodel.Text("first answer"), fakemodel.Text("second answer"))
	s := h.session()
	h.send(s.ID, "one")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	two := h.send(s.ID, "two")
	three := h.send(s.ID, "three")
	h.fake.Release()
	_, evs := h.waitTurns(s.ID, 2)

	started := ofType(evs, engine.EventTurnStarted)
	ids := payload[engine.TurnStarted](t, started[1]).InputIDs
	if len(ids) != 2 || ids[0] != two.ID || ids[1] != three.ID {
		t.Fatalf("second turn took %v, want [%s %s]", ids, two.ID, three.ID)
	}
	reqs := h.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model called %d times, want 2", len(reqs))
	}
	second := string(reqs[1].Raw)
	for _, want := range []string{"one", "first answer", "two", "three"} {
		if !strings.Contains(second, want) {
			t.Errorf("second request lacks %q: %s", want, second)
		}
	}
}

func TestEngine_InterruptModeCancelsRunningTurn(t *testing.T) {
	h := newHarness(t)
	h.fake.Push(fakemodel.Hold(), fakemodel.Text("answer to the new input"))
	s := h.session()
	h.send(s.ID, "slow question")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "never mind, do this", Mode: engine.ModeInterrupt}); err != nil {
		t.Fatal(err)
	}
	s, evs := h.waitTurns(s.ID, 2)
	done := ofType(evs, engine.EventTurnCompleted)
	if got := payload[engine.TurnCompleted](t, done[0]).Outcome; got != engine.OutcomeCancelled {
		t.Fatalf("first turn outcome %v", got)
	}
	if got := payload[engine.TurnCompleted](t, done[1]).Outcome; got != engine.OutcomeCompleted {
		t.Fatalf("second turn outcome %v", got)
	}
	if s.Status != engine.StatusIdle {
		t.Fatalf("status %s", s.Status)
	}
}

func TestEngine_CancelStopsTurnAndDropsQueuedInput(t *testing.T) {
	h := newHarness(t)
	h.fake.Push(fakemodel.Hold())
	s := h.session()
	h.send(s.ID, "work")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	h.send(s.ID, "queued")
	got, err := h.eng.Cancel(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.StatusIdle {
		t.Fatalf("status after cancel: %s", got.Status)
	}
	_, evs := h.waitTurns(s.ID, 1)
	if outcome(t, evs) != engine.OutcomeCancelled {
		t.Fatalf("outcome %s", outcome(t, evs))
	}
	if n := count(evs, engine.EventTurnStarted); n != 1 {
		t.Fatalf("%d turns started; the queued input should have been dropped", n)
	}
	if h.fake.Received() != 1 {
		t.Fatalf("model called %d times", h.fake.Received())
	}
}

func TestEngine_TransientProviderFailureInterruptsThenResume(t *testing.T) {
	h := newHarness(t)
	h.fake.Push(fakemodel.Fail(500, "upstream exploded"))
	s := h.session()
	in := h.send(s.ID, "hello")
	s, evs := h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })

	errs := ofType(evs, engine.EventSessionError)
	if len(errs) != 1 {
		t.Fatalf("%d session.error events\n%s", len(errs), dump(evs))
	}
	d := payload[engine.SessionError](t, errs[0])
	if d.InputID != in.ID || d.Code != engine.ProviderUnavailable {
		t.Fatalf("session.error data %+v", d)
	}
	last := evs[len(evs)-1]
	if last.Type != engine.EventSessionStatus || payload[engine.SessionStatus](t, last).Status != "interrupted" {
		t.Fatalf("last event %s %s", last.Type, last.Data)
	}

	_, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "again"})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("send to interrupted session: %v, want conflict", err)
	}
	s, err = h.eng.Resume(context.Background(), s.ID)
	if err != nil || s.Status != engine.StatusIdle {
		t.Fatalf("resume: %v %s", err, s.Status)
	}
	h.fake.Push(fakemodel.Text("recovered"))
	h.send(s.ID, "try again")
	s, evs = h.waitTurns(s.ID, 2)
	if s.Status != engine.StatusIdle || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("after resume: %s %s", s.Status, outcome(t, evs))
	}
	// Resume resets to the checkpoint: the broken turn, its input
	// included, leaves the context (seed 000), so it cannot break the next.
	req := string(h.fake.Requests()[1].Raw)
	if strings.Contains(req, "hello") || !strings.Contains(req, "try again") {
		t.Fatalf("request after resume: %s", req)
	}
}

func TestEngine_PermanentProviderFailureFails(t *testing.T) {
	h := newHarness(t)
	h.fake.Push(fakemodel.Fail(401, "invalid x-api-key"))
	s := h.session()
	h.send(s.ID, "hello")
	_, evs := h.waitFor(s.ID, "failed", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusFailed })
	d := payload[engine.SessionError](t, ofType(evs, engine.EventSessionError)[0])
	if d.Code != engine.ProviderAuth {
		t.Fatalf("code %v", d.Code)
	}
}

func TestEngine_FailureCancelsQueuedInput(t *testing.T) {
	h := newHarness(t)
	block := make(chan struct{})
	h.fake.Push(fakemodel.Block(block), fakemodel.Fail(503, "overloaded"))
	s := h.session()
	h.send(s.ID, "first")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	queued := h.send(s.ID, "second")
	close(block)
	_, evs := h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })
	errs := ofType(evs, engine.EventSessionError)
	if len(errs) != 2 || payload[engine.SessionError](t, errs[1]).InputID != queued.ID || payload[engine.SessionError](t, errs[1]).Code != "input_cancelled" {
		t.Fatalf("session errors:\n%s", dump(errs))
	}
}

func TestEngine_ToolErrors(t *testing.T) {
	slow := tools.Definition{
		Name: "slow", Description: "never returns in time", Timeout: 50 * 1e6,
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	big := tools.Definition{
		Name: "big", Description: "returns too much",
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return json.Marshal(strings.Repeat("x", 2000))
		},
	}
	badJSON := tools.Definition{
		Name: "bad_json", Description: "returns invalid JSON",
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"nope"`), nil
		},
	}
	remote := tools.Definition{
		Name: "remote", Description: "fails after dispatch",
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return nil, tools.Unknown("connection reset after the request was sent")
		},
	}
	local := tools.Definition{
		Name: "local", Description: "fails before dispatch",
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return nil, tools.Failed("missing credential")
		},
	}
	panics := tools.Definition{
		Name: "panics", Description: "panics",
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) { panic("boom") },
	}
	var adds atomic.Int64
	h := newHarness(t, withTools(slow, big, badJSON, remote, local, panics, addTool(&adds)),
		func(c *engine.Config, _ *engine.Agent) { c.MaxOutputBytes = 1000 })
	h.fake.Push(
		fakemodel.ToolCalls(
			fakemodel.Call{ID: "c_invalid", Name: "add", Input: `{"a":"one"}`},
			fakemodel.Call{ID: "c_unknown", Name: "nope"},
			fakemodel.Call{ID: "c_slow", Name: "slow"},
			fakemodel.Call{ID: "c_big", Name: "big"},
			fakemodel.Call{ID: "c_badjson", Name: "bad_json"},
			fakemodel.Call{ID: "c_remote", Name: "remote"},
			fakemodel.Call{ID: "c_local", Name: "local"},
			fakemodel.Call{ID: "c_panics", Name: "panics"},
		),
		fakemodel.Text("I see the errors."),
	)
	s := h.session()
	h.send(s.ID, "break things")
	s, evs := h.waitTurns(s.ID, 1)
	if s.Status != engine.StatusIdle || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("tool errors must not stop the turn: %s %s", s.Status, outcome(t, evs))
	}
	want := map[string]struct {
		unknown bool
		text    string
	}{
		"c_invalid": {false, "input does not match its schema"},
		"c_unknown": {false, `unknown tool "nope"`},
		"c_slow":    {true, "timed out"},
		"c_big":     {true, "over the 1000-byte limit"},
		"c_badjson": {true, "invalid JSON"},
		"c_remote":  {true, "connection reset"},
		"c_local":   {false, "missing credential"},
		"c_panics":  {true, "panicked"},
	}
	rs := results(t, evs)
	if len(rs) != len(want) {
		t.Fatalf("%d results", len(rs))
	}
	for _, r := range rs {
		w := want[r.ProviderCallID]
		if !r.Result.IsError || r.Result.UnknownOutcome != w.unknown || !strings.Contains(r.Result.Content[0].Text, w.text) {
			t.Errorf("%s: is_error=%v unknown=%v text=%q; want unknown=%v text~%q",
				r.ProviderCallID, r.Result.IsError, r.Result.UnknownOutcome, r.Result.Content[0].Text, w.unknown, w.text)
		}
	}
	if adds.Load() != 0 {
		t.Fatalf("invalid input was dispatched")
	}
	if !strings.Contains(string(h.fake.Requests()[1].Raw), `"is_error":true`) {
		t.Fatalf("model was not told about the errors")
	}
}

func TestEngine_ConditionalTools(t *testing.T) {
	var adds atomic.Int64
	add, err := tools.Compile(addTool(&adds))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(_ *engine.Config, a *engine.Agent) {
		a.When = []engine.Conditional{{
			Match: func(in string) bool { return strings.Contains(strings.ToLower(in), "math") },
			Tools: []*tools.Tool{add},
		}}
	})
	s := h.session()
	h.send(s.ID, "hello there")
	h.waitTurns(s.ID, 1)
	h.send(s.ID, "let's do math")
	h.waitTurns(s.ID, 2)
	reqs := h.fake.Requests()
	if strings.Contains(string(reqs[0].Raw), `"add"`) {
		t.Errorf("add offered for unrelated input")
	}
	if !strings.Contains(string(reqs[1].Raw), `"name":"add"`) {
		t.Errorf("add not offered for matching input")
	}
}

func TestEngine_OverloadedWhenQueueFull(t *testing.T) {
	h := newHarness(t, func(c *engine.Config, _ *engine.Agent) { c.MaxRunningTurns, c.MaxQueuedTurns = 1, 1 })
	h.fake.Push(fakemodel.Hold())
	a, b, c := h.session(), h.session(), h.session()
	h.send(a.ID, "runs")
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	h.send(b.ID, "waits")
	_, _, err := h.eng.Send(context.Background(), c.ID, engine.Input{Text: "refused"})
	if !errors.Is(err, engine.ErrOverloaded) {
		t.Fatalf("third session: %v, want overloaded", err)
	}
	evs, _ := h.eng.Events(context.Background(), c.ID, 0, 0)
	if len(evs) != 0 {
		t.Fatalf("a refused input was stored: %s", dump(evs))
	}
	// Input joining an already queued turn is still accepted.
	h.send(b.ID, "joins the queued turn")
	h.fake.Release()
	h.waitTurns(a.ID, 1)
	h.waitTurns(b.ID, 1)
}

func TestEngine_IdempotentSend(t *testing.T) {
	h := newHarness(t)
	s := h.session()
	first, dup, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "hi", IdempotencyKey: "k1"})
	if err != nil || dup {
		t.Fatal(err, dup)
	}
	again, dup, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "hi", IdempotencyKey: "k1"})
	if err != nil || !dup || again.ID != first.ID || again.Seq != first.Seq {
		t.Fatalf("repeat: %v dup=%v %+v", err, dup, again)
	}
	_, evs := h.waitTurns(s.ID, 1)
	if count(evs, engine.EventUserMessage) != 1 || count(evs, engine.EventTurnStarted) != 1 {
		t.Fatalf("events:\n%s", dump(evs))
	}
}

func TestEngine_RecoverAfterCrash(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Bool
	hang := tools.Definition{
		Name: "deploy", Description: "a write that never answers",
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			started.Store(true)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, ctx.Err()
		},
	}
	h := newHarness(t, withTools(hang))
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_deploy", Name: "deploy"}))
	s := h.session()
	in := h.send(s.ID, "deploy it")
	h.waitFor(s.ID, "tool.call", func(_ engine.Session, evs []engine.Event) bool { return count(evs, engine.EventToolCall) == 1 })

	h.crash(func() { close(release) }, withTools(hang))

	s, evs := h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })
	rs := results(t, evs)
	if len(rs) != 1 || rs[0].ProviderCallID != "toolu_deploy" || !rs[0].Result.IsError || !rs[0].Result.UnknownOutcome {
		t.Fatalf("recovered result: %+v", rs)
	}
	errs := ofType(evs, engine.EventSessionError)
	if len(errs) != 1 || payload[engine.SessionError](t, errs[0]).InputID != in.ID {
		t.Fatalf("session.error:\n%s", dump(errs))
	}
	if _, err := h.eng.Resume(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	h.send(s.ID, "what happened?")
	s, _ = h.waitTurns(s.ID, 2)
	if s.Status != engine.StatusIdle {
		t.Fatalf("status %s", s.Status)
	}
}

func TestEngine_SessionContextReachesTheModel(t *testing.T) {
	h := newHarness(t)
	s, _, err := h.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Interactive: true, Context: "The nightly digest said: 3 deploys failed."})
	if err != nil {
		t.Fatal(err)
	}
	if s.LastSeq != 1 || s.Status != engine.StatusIdle {
		t.Fatalf("session %+v", s)
	}
	h.send(s.ID, "which ones?")
	h.waitTurns(s.ID, 1)
	if req := string(h.fake.Requests()[0].Raw); !strings.Contains(req, "3 deploys failed") || !strings.Contains(req, "which ones?") {
		t.Fatalf("request %s", req)
	}
}

func TestEngine_DynamicToolsAreReadEachTurn(t *testing.T) {
	var mu sync.Mutex
	var current []*tools.Tool
	var adds atomic.Int64
	h := newHarness(t, func(_ *engine.Config, a *engine.Agent) {
		a.Dynamic = func() []*tools.Tool {
			mu.Lock()
			defer mu.Unlock()
			return current
		}
	})
	s := h.session()
	h.send(s.ID, "first")
	h.waitTurns(s.ID, 1)
	add, err := tools.Compile(addTool(&adds))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	current = []*tools.Tool{add}
	mu.Unlock()
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "add", Input: `{"a":1,"b":2}`}), fakemodel.Text("3"))
	h.send(s.ID, "second")
	h.waitTurns(s.ID, 2)
	reqs := h.fake.Requests()
	if strings.Contains(string(reqs[0].Raw), `"add"`) || !strings.Contains(string(reqs[1].Raw), `"name":"add"`) || adds.Load() != 1 {
		t.Fatalf("dynamic tool not picked up per turn (adds %d)", adds.Load())
	}
}
