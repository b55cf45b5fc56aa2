package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/anthropic"
	"brain/engine/model/fakemodel"
	"brain/store/sqlite"
	"brain/tools"
)

// harness is an engine on a real SQLite file, talking through the real
// Anthropic SDK to the scripted fake model server.
type harness struct {
	t     *testing.T
	eng   *engine.Engine
	store *sqlite.Store
	fake  *fakemodel.Server
	path  string
	ids   atomic.Int64
	mu    sync.Mutex
	now   time.Time
	peers *peerList // the replicas' peers (replicas_test.go)
}

type harnessOption func(*engine.Config, *engine.Agent)

func withTools(defs ...tools.Definition) harnessOption {
	return func(_ *engine.Config, a *engine.Agent) {
		for _, d := range defs {
			t, err := tools.Compile(d)
			if err != nil {
				panic(err)
			}
			a.Tools = append(a.Tools, t)
		}
	}
}

func newHarness(t *testing.T, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	h.fake = fakemodel.New()
	t.Cleanup(h.fake.Close)
	h.path = filepath.Join(t.TempDir(), "brain.db")
	h.open(opts...)
	return h
}

// open builds an engine over the harness's database and starts it.
func (h *harness) open(opts ...harnessOption) {
	h.t.Helper()
	st, err := sqlite.Open(context.Background(), h.path)
	if err != nil {
		h.t.Fatal(err)
	}
	h.store = st
	m, err := anthropic.New(anthropic.Config{BaseURL: h.fake.URL(), APIKey: "test-key", Model: "fake", MaxRetries: 0})
	if err != nil {
		h.t.Fatal(err)
	}
	agent := &engine.Agent{Name: "default", Model: m, Instructions: "You are a test agent."}
	cfg := engine.Config{
		Store:       st,
		Clock:       h.clock,
		NewID:       h.newID,
		ToolTimeout: 10 * time.Second,
	}
	for _, o := range opts {
		o(&cfg, agent)
	}
	cfg.Agents = append([]*engine.Agent{agent}, cfg.Agents...) // options may add agents
	eng, err := engine.New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.eng = eng
	if err := eng.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(h.close)
}

// crash abandons the engine without Stop, as a kill would, and opens a new
// one on the same file; the new one recovers what the first left running.
// At cleanup unblock lets the abandoned engine's turn end, and it is
// stopped. (The real SIGKILL test is in bot.)
func (h *harness) crash(unblock func(), opts ...harnessOption) {
	h.t.Helper()
	crashed, crashedStore := h.eng, h.store
	h.eng = nil
	h.open(opts...)
	h.t.Cleanup(func() {
		unblock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = crashed.Stop(ctx)
		_ = crashedStore.Close()
	})
}

func (h *harness) close() {
	if h.eng == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.fake.Release()
	_ = h.eng.Stop(ctx)
	_ = h.store.Close()
	h.eng = nil
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = h.now.Add(time.Millisecond)
	return h.now
}

func (h *harness) newID(prefix string) string {
	return fmt.Sprintf("%s_%06d", prefix, h.ids.Add(1))
}

func (h *harness) session() engine.Session {
	h.t.Helper()
	s, _, err := h.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Interactive: true, StartedBy: "tester"})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) send(id, text string) engine.Event {
	h.t.Helper()
	ev, _, err := h.eng.Send(context.Background(), id, engine.Input{Text: text})
	if err != nil {
		h.t.Fatalf("send %q: %v", text, err)
	}
	return ev
}

// waitFor waits until cond holds for the session, re-checking after every
// commit. The deadline only turns a hang into a failure.
func (h *harness) waitFor(id string, what string, cond func(engine.Session, []engine.Event) bool) (engine.Session, []engine.Event) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		changed := h.eng.Changed(id)
		// A consistent snapshot: the session, its log, and the session
		// again unchanged, so a condition never pairs a status with a log
		// older or newer than it (a commit in between reads again).
		before, err := h.eng.Session(ctx, id)
		if err != nil {
			h.t.Fatal(err)
		}
		evs, err := h.eng.Events(ctx, id, 0, 0)
		if err != nil {
			h.t.Fatal(err)
		}
		s, err := h.eng.Session(ctx, id)
		if err != nil {
			h.t.Fatal(err)
		}
		if !reflect.DeepEqual(before, s) {
			continue
		}
		if cond(s, evs) {
			return s, evs
		}
		select {
		case <-changed:
		case <-ctx.Done():
			h.t.Fatalf("timed out waiting for %s; status %s, events:\n%s", what, s.Status, dump(evs))
		}
	}
}

// waitTurns waits until n turns have completed and the session is not running.
func (h *harness) waitTurns(id string, n int) (engine.Session, []engine.Event) {
	h.t.Helper()
	return h.waitFor(id, fmt.Sprintf("%d completed turns", n), func(s engine.Session, evs []engine.Event) bool {
		return s.Status != engine.StatusRunning && count(evs, engine.EventTurnCompleted) >= n
	})
}

func count(evs []engine.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func ofType(evs []engine.Event, typ string) []engine.Event {
	var out []engine.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func dump(evs []engine.Event) string {
	out := ""
	for _, ev := range evs {
		out += fmt.Sprintf("  %d %s %s\n", ev.Seq, ev.Type, ev.Data)
	}
	return out
}

// payload decodes ev, which must carry a T.
func payload[T engine.Payload](t *testing.T, ev engine.Event) T {
	t.Helper()
	p, err := ev.Decode()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := p.(T)
	if !ok {
		t.Fatalf("event %d %s carries %T, want %T", ev.Seq, ev.Type, p, v)
	}
	return v
}

func results(t *testing.T, evs []engine.Event) []engine.ToolCallResult {
	t.Helper()
	var out []engine.ToolCallResult
	for _, ev := range ofType(evs, engine.EventToolResult) {
		out = append(out, payload[engine.ToolCallResult](t, ev))
	}
	return out
}

// callID is brain's id of the call the provider named providerID.
func callID(t *testing.T, evs []engine.Event, providerID string) string {
	t.Helper()
	for _, ev := range ofType(evs, engine.EventToolCall) {
		if c := payload[engine.ToolCall](t, ev); c.ProviderID == providerID {
			return c.ID
		}
	}
	t.Fatalf("no tool.call from provider call %s", providerID)
	return ""
}

func outcome(t *testing.T, evs []engine.Event) engine.Outcome {
	t.Helper()
	done := ofType(evs, engine.EventTurnCompleted)
	if len(done) == 0 {
		t.Fatal("no turn.completed")
	}
	return payload[engine.TurnCompleted](t, done[len(done)-1]).Outcome
}

// addTool adds two numbers; calls counts its runs.
func addTool(calls *atomic.Int64) tools.Definition {
	return tools.Definition{
		Name:        "add",
		Description: "Add two integers",
		Input:       json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`),
		Output:      json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			calls.Add(1)
			var in struct{ A, B int }
			if err := json.Unmarshal(c.Input, &in); err != nil {
				return nil, err
			}
			return json.Marshal(map[string]int{"sum": in.A + in.B})
		},
	}
}
