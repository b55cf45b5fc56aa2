package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/store/sqlite"
	"brain/tools"
)

// The wire fixture is the event log of wireScenario, which drives every
// event writer of the engine on a real SQLite file. It was captured from
// brain at commit 87c6032, before event payloads were typed, so it is the
// shape existing databases hold. TestWire_WritersMatchFixture keeps the
// writers byte-compatible with it; TestWire_FixtureDecodes keeps the codec
// able to read it. Rewrite it (-update) only for a deliberate wire change,
// and then keep a copy of the old file for the decode test.
const wireFixture = "testdata/events-87c6032.txt"

var updateWire = flag.Bool("update", false, "rewrite "+wireFixture+" from the current writers")

func TestWire_WritersMatchFixture(t *testing.T) {
	got := wireScenario(t)
	if *updateWire {
		if err := os.MkdirAll(filepath.Dir(wireFixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wireFixture, []byte(formatWire(got)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readWire(t)
	if len(got) != len(want) {
		t.Errorf("%d events, fixture has %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if g, w := formatWire(got[i:i+1]), formatWire(want[i:i+1]); g != w {
			t.Errorf("event %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
}

// wireLine is one fixture line: "SEQ TYPE TURN_ID DATA" ("-" for no turn).
func formatWire(evs []engine.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		turn := ev.TurnID
		if turn == "" {
			turn = "-"
		}
		fmt.Fprintf(&b, "%d %s %s %s\n", ev.Seq, ev.Type, turn, ev.Data)
	}
	return b.String()
}

func readWire(t *testing.T) []engine.Event {
	t.Helper()
	f, err := os.Open(wireFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []engine.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 4)
		if len(parts) != 4 {
			t.Fatalf("fixture line %q", sc.Text())
		}
		ev := engine.Event{Type: parts[1], TurnID: parts[2], Data: json.RawMessage(parts[3])}
		if ev.TurnID == "-" {
			ev.TurnID = ""
		}
		if _, err := fmt.Sscan(parts[0], &ev.Seq); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

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

// wireScenario runs one session through every writer: context, input with
// author, key, mode and answer, text, tool calls (valid, invalid, without id
// or input), progress, results (ok, error, unknown), the result tool, a
// question, approvals decided every way, retried, expired and interrupted by
// a crash, max iterations, cancel, interrupt, provider and internal
// failures with queued input, resume, crash recovery and shutdown. It
// returns the session's log as the store holds it.
func wireScenario(t *testing.T) []engine.Event {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r := &wireRig{t: t, store: &crashable{Store: st}, now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	r.model = &scripted{entered: make(chan struct{}, 4)}
	r.crashed = make(chan struct{}, 1)
	r.agent = &engine.Agent{Name: "default", Model: r.model, Instructions: "test", Ask: true, MaxToolIterations: 3}
	for _, d := range r.tools() {
		tool, err := tools.Compile(d)
		if err != nil {
			t.Fatal(err)
		}
		r.agent.Tools = append(r.agent.Tools, tool)
	}
	r.start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.eng.Stop(ctx)
	})

	s, _, err := r.eng.CreateSession(ctx, engine.NewSession{Agent: "default", Origin: engine.OriginSlack, ThreadKey: "slack:T1:C1:1.2",
		Interactive: true, StartedBy: "U1", Context: "Thread <context> & \"quotes\""})
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID
	turns := 0
	next := func() engine.Session { turns++; return r.waitTurns(id, turns) }

	// Tools of every kind, then the result tool, then an answer.
	r.model.push(
		say("Working on it <now> & later",
			call("call_add", "add", `{"a": 1, "b": 2}`),
			call("call_fetch", "fetch", `{}`),
			call("call_bad", "add", `not json`),
			call("", "add", ``),
			call("call_nope", "nope", `{}`)),
		say("", call("call_report", "report", `{"status": "one"}`)),
		say("All done."),
	)
	r.send(id, engine.Input{Text: "hello <world>  \n", Author: "U1", IdempotencyKey: "key-1"})
	next()

	// A question, steering while it is open, and the answer.
	r.model.push(say("Which one?", call("call_ask", "ask", `{"text":"Which environment?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`)))
	r.send(id, engine.Input{Text: "deploy", Author: "U1"})
	s = next()
	r.send(id, engine.Input{Text: "careful, friday freeze", Author: "U2"})
	r.model.push(say("", call("call_t1", "ticket", `{"title":"Deploy","mode":"ok"}`)), say("Proposed."))
	r.send(id, engine.Input{Text: "prod", Answer: &engine.Answer{QuestionID: s.OpenQuestion().ID, Value: "prod"}})
	next()
	r.decide(r.pending(id)[0].ID, true)
	r.waitEvents(id, engine.EventApprovalApplied, 1)

	// Approvals decided, applied, failed, retried, unconfirmed and expired.
	r.model.push(say("",
		call("call_t2", "ticket", `{"title":"No","mode":"deny"}`),
		call("call_t3", "ticket", `{"title":"Empty","mode":"empty"}`),
		call("call_t4", "ticket", `{"title":"Flaky","mode":"flaky"}`),
		call("call_t5", "ticket", `{"title":"Lost","mode":"unknown"}`),
		call("call_t6", "ticket", `{"title":"Late","mode":"late"}`)),
		say("Five proposals."))
	r.send(id, engine.Input{Text: "more tickets", Author: "U1"})
	next()
	as := r.pending(id)
	r.decide(as[0].ID, false)
	r.decide(as[1].ID, true)
	r.waitEvents(id, engine.EventApprovalApplied, 2)
	r.decide(as[2].ID, true)
	r.waitEvents(id, engine.EventApprovalFailed, 1)
	if _, err := r.eng.Retry(ctx, as[2].ID, engine.Decision{By: "U1"}); err != nil {
		t.Fatal(err)
	}
	r.waitEvents(id, engine.EventApprovalApplied, 3)
	r.decide(as[3].ID, true)
	r.waitEvents(id, engine.EventApprovalUnconfirmed, 1)
	r.advance(200 * time.Hour)
	if err := r.eng.ExpireApprovals(ctx); err != nil {
		t.Fatal(err)
	}

	// The iteration cap.
	r.model.push(say("", call("call_l1", "add", `{"a":2,"b":3}`)), say("", call("call_l2", "add", `{"a":2,"b":3}`)), say("", call("call_l3", "add", `{"a":2,"b":3}`)))
	r.send(id, engine.Input{Text: "loop", Author: "U1"})
	next()

	// Cancel a running turn, then an open question.
	hold := make(chan struct{})
	r.model.push(scriptStep{hold: hold})
	r.send(id, engine.Input{Text: "slow", Author: "U1"})
	r.entered()
	if _, err := r.eng.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	next()
	r.model.push(say("", call("call_ask2", "ask", `{"text":"Sure?"}`)))
	r.send(id, engine.Input{Text: "ask me", Author: "U1"})
	next()
	if _, err := r.eng.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}

	// Interrupt a running turn with new input.
	r.model.push(scriptStep{hold: make(chan struct{})}, say("Switching."))
	r.send(id, engine.Input{Text: "slow again", Author: "U1"})
	r.entered()
	r.send(id, engine.Input{Text: "stop that", Author: "U1", Mode: engine.ModeInterrupt})
	next()
	next()

	// Provider failures (transient with queued input, permanent) and an
	// internal one, each resumed.
	hold = make(chan struct{})
	r.model.push(scriptStep{hold: hold, err: &engine.ProviderError{Transient: true, Status: 429, Code: engine.ProviderRateLimited, Message: "slow down"}})
	r.send(id, engine.Input{Text: "rate", Author: "U1"})
	r.entered()
	r.send(id, engine.Input{Text: "queued meanwhile", Author: "U1"})
	close(hold)
	next()
	r.resume(id)
	r.model.push(scriptStep{err: &engine.ProviderError{Status: 401, Code: engine.ProviderAuth, Message: "invalid x-api-key"}})
	r.send(id, engine.Input{Text: "auth", Author: "U1"})
	next()
	r.resume(id)
	r.model.push(scriptStep{err: errors.New("boom")})
	r.send(id, engine.Input{Text: "internal", Author: "U1"})
	next()
	r.resume(id)

	// A crash during an apply, then during a tool call.
	r.model.push(say("", call("call_t7", "ticket", `{"title":"Crash","mode":"crash"}`)), say("ok"))
	r.send(id, engine.Input{Text: "crash apply", Author: "U1"})
	next()
	r.decide(r.pending(id)[0].ID, true)
	r.restart()
	r.model.push(say("", call("call_crash", "crash", `{}`)))
	r.send(id, engine.Input{Text: "crash turn", Author: "U1"})
	select {
	case <-r.crashed:
	case <-time.After(20 * time.Second):
		t.Fatal("the crash tool did not run")
	}
	r.restart()
	turns++
	r.waitTurns(id, turns)
	r.resume(id)

	// Shutdown during a turn.
	r.model.push(scriptStep{hold: make(chan struct{})})
	r.send(id, engine.Input{Text: "long", Author: "U1"})
	r.entered()
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	r.stop(stopped)

	evs, err := st.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
