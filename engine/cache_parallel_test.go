package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/model/openai"
	"brain/tools"
)

// stripCache removes cache_control from every object in v.
func stripCache(v any) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "cache_control")
		for k, x := range v {
			v[k] = stripCache(x)
		}
	case []any:
		for i, x := range v {
			v[i] = stripCache(x)
		}
	}
	return v
}

func hasCacheControl(raw json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	cc, ok := m["cache_control"].(map[string]any)
	return ok && cc["type"] == "ephemeral"
}

func TestCache_AnthropicBreakpointsAndStablePrefix(t *testing.T) {
	h := newFakeHarness(t, []fakemodel.Option{fakemodel.WithRecordLimit(-1)}, withTools(pageTool(3000), reportTool()))
	h.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: `{"page":1}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: `{"page":2}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: `{"page":3}`}),
		fakemodel.Text("three pages read"),
	)
	s := h.session()
	h.send(s.ID, "read three pages")
	_, evs := h.waitTurns(s.ID, 1)
	reqs := h.fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	type body struct {
		System   []json.RawMessage `json:"system"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	var prev map[string]json.RawMessage
	var prevMsgs []any
	for i, req := range reqs {
		var b body
		if err := json.Unmarshal(req.Raw, &b); err != nil {
			t.Fatal(err)
		}
		last := b.Messages[len(b.Messages)-1].Content
		if !hasCacheControl(b.System[len(b.System)-1]) || !hasCacheControl(b.Tools[len(b.Tools)-1]) || !hasCacheControl(last[len(last)-1]) {
			t.Errorf("request %d lacks a breakpoint on the system prompt, the last tool or the history's end", i)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(req.Raw, &raw); err != nil {
			t.Fatal(err)
		}
		var msgs []any
		if err := json.Unmarshal(raw["messages"], &msgs); err != nil {
			t.Fatal(err)
		}
		msgs = stripCache(msgs).([]any)
		if prev != nil {
			// The stable prefix is byte-identical round to round, and the
			// history only grows.
			for _, k := range []string{"system", "tools", "model", "max_tokens"} {
				if string(raw[k]) != string(prev[k]) {
					t.Errorf("request %d: %s differs from the round before:\n%s\n%s", i, k, raw[k], prev[k])
				}
			}
			if len(msgs) <= len(prevMsgs) || !reflect.DeepEqual(msgs[:len(prevMsgs)], prevMsgs) {
				t.Errorf("request %d: the history of the round before is not its prefix", i)
			}
		}
		prev, prevMsgs = raw, msgs
	}
	u := payload[engine.TurnCompleted](t, ofType(evs, engine.EventTurnCompleted)[0]).Usage
	if u.CacheReadTokens == 0 || u.CacheWriteTokens == 0 || u.UncachedInputTokens() <= 0 || u.UncachedInputTokens() >= u.CacheReadTokens {
		t.Errorf("usage %+v: rounds after the first should read most of their input from the cache", u)
	}
}

func TestCache_OpenAIStablePrefixIsCached(t *testing.T) {
	fake := fakemodel.New(fakemodel.WithRecordLimit(-1))
	m, err := openai.New(openai.Config{BaseURL: fake.OpenAIBaseURL(), APIKey: "k", Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	h := harnessOn(t, fake, withModel(m), withTools(pageTool(3000), reportTool()))
	h.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: `{"page":1}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: `{"page":2}`}),
		fakemodel.Text("two pages read"),
	)
	s := h.session()
	h.send(s.ID, "read two pages")
	_, evs := h.waitTurns(s.ID, 1)
	reqs := h.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		var prev, cur map[string]json.RawMessage
		if json.Unmarshal(reqs[i-1].Raw, &prev) != nil || json.Unmarshal(reqs[i].Raw, &cur) != nil {
			t.Fatal("request bodies are not JSON objects")
		}
		if string(cur["tools"]) != string(prev["tools"]) {
			t.Errorf("request %d: tools differ from the round before", i)
		}
		var pm, cm []json.RawMessage
		if json.Unmarshal(prev["messages"], &pm) != nil || json.Unmarshal(cur["messages"], &cm) != nil || len(cm) <= len(pm) {
			t.Fatalf("request %d: messages", i)
		}
		for j := range pm {
			if string(pm[j]) != string(cm[j]) {
				t.Errorf("request %d: message %d differs from the round before", i, j)
			}
		}
	}
	u := payload[engine.TurnCompleted](t, ofType(evs, engine.EventTurnCompleted)[0]).Usage
	if u.CacheReadTokens == 0 || u.CacheWriteTokens != 0 || u.CacheReadTokens >= u.InputTokens {
		t.Errorf("usage %+v: the later rounds should read their prefix from OpenAI's cache", u)
	}
}

// barrierTool is a tool whose calls each wait until n calls are running at
// once: run one at a time, they would time out. Call i then waits for
// call i+1 to finish, so they end in the reverse of the model's order.
type barrierTool struct {
	n       int
	mu      sync.Mutex
	running int
	most    int
	all     chan struct{}
	allOnce sync.Once
	done    []chan struct{}
	calls   atomic.Int64
}

func newBarrierTool(n, calls int) *barrierTool {
	b := &barrierTool{n: n, all: make(chan struct{})}
	for i := 0; i < calls; i++ {
		b.done = append(b.done, make(chan struct{}))
	}
	return b
}

func (b *barrierTool) def() tools.Definition {
	return tools.Definition{
		Name: "slow", Description: "Takes a while",
		Input: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			var in struct{ I int }
			if err := json.Unmarshal(c.Input, &in); err != nil {
				return nil, err
			}
			b.calls.Add(1)
			b.mu.Lock()
			b.running++
			b.most = max(b.most, b.running)
			if b.running == b.n {
				b.allOnce.Do(func() { close(b.all) })
			}
			b.mu.Unlock()
			defer func() {
				b.mu.Lock()
				b.running--
				b.mu.Unlock()
				close(b.done[in.I])
			}()
			if in.I < b.n {
				select {
				case <-b.all:
				case <-ctx.Done():
					return nil, errors.New("ran alone: the other calls never started")
				}
			}
			if in.I+1 < len(b.done) && in.I+1 < b.n {
				select {
				case <-b.done[in.I+1]:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return json.Marshal(map[string]int{"i": in.I})
		},
	}
}

func TestParallelTools_RunConcurrentlyAndComeBackInOrder(t *testing.T) {
	const calls = 6 // the bound is 4: two wait for a slot
	b := newBarrierTool(4, calls)
	h := newFakeHarness(t, []fakemodel.Option{fakemodel.WithRecordLimit(-1)}, withTools(b.def()))
	var cs []fakemodel.Call
	for i := 0; i < calls; i++ {
		cs = append(cs, fakemodel.Call{ID: fmt.Sprintf("toolu_%d", i), Name: "slow", Input: fmt.Sprintf(`{"i":%d}`, i)})
	}
	h.fake.Push(fakemodel.ToolCalls(cs...), fakemodel.Text("all done"))
	s := h.session()
	h.send(s.ID, "run them")
	_, evs := h.waitTurns(s.ID, 1)
	if b.most != 4 {
		t.Errorf("at most %d calls ran at once, want 4 (the bound)", b.most)
	}
	rs := results(t, evs)
	if len(rs) != calls {
		t.Fatalf("%d results:\n%s", len(rs), dump(evs))
	}
	for i, r := range rs {
		want := fmt.Sprintf(`{"i":%d}`, i)
		if r.ProviderCallID != fmt.Sprintf("toolu_%d", i) || r.Result.IsError || r.Result.Text() != want {
			t.Errorf("result %d: %s %s %v, want toolu_%d %s", i, r.ProviderCallID, r.Result.Text(), r.Result.IsError, i, want)
		}
	}
	// The model gets them back in its order too.
	reqs := h.fake.Requests()
	var msgs []struct {
		Content []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
		} `json:"content"`
	}
	if err := json.Unmarshal(reqs[1].Messages, &msgs); err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1].Content
	for i := 0; i < calls; i++ {
		if last[i].Type != "tool_result" || last[i].ToolUseID != fmt.Sprintf("toolu_%d", i) {
			t.Errorf("block %d of the results message: %+v", i, last[i])
		}
	}
}

func TestParallelTools_SessionCallsKeepTheirPlace(t *testing.T) {
	// A result-tool call between independent calls runs alone: the calls
	// before it have ended when it starts, the ones after start later.
	var order []string
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	quick := tools.Definition{
		Name: "quick", Description: "Quick", Input: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, tools.Call) (json.RawMessage, error) {
			note("quick")
			return json.RawMessage(`{}`), nil
		},
	}
	report := reportTool()
	run := report.Run
	report.Run = func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
		note("report")
		return run(ctx, c)
	}
	h := newFakeHarness(t, nil, withTools(quick, report))
	h.fake.Push(fakemodel.ToolCalls(
		fakemodel.Call{Name: "quick"}, fakemodel.Call{Name: "quick"},
		fakemodel.Call{Name: "report", Input: `{"status":"ok"}`},
		fakemodel.Call{Name: "quick"},
	), fakemodel.Text("done"))
	s := h.session()
	h.send(s.ID, "go")
	h.waitTurns(s.ID, 1)
	if want := []string{"quick", "quick", "report", "quick"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

// A crash in the middle of a parallel round: every call was recorded
// before any ran, results wait for the calls before them, so the calls
// without a recorded result (the hanging one, and the finished one after
// it) are marked unknown_outcome by recovery, and none runs again.
func TestParallelTools_CrashMidRound(t *testing.T) {
	release := make(chan struct{})
	var hangs, quicks atomic.Int64
	hang := tools.Definition{
		Name: "deploy", Description: "a write that never answers", Input: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			hangs.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, ctx.Err()
		},
	}
	quickDone := make(chan struct{})
	quick := tools.Definition{
		Name: "notify", Description: "a quick write", Input: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, tools.Call) (json.RawMessage, error) {
			if quicks.Add(1) == 1 {
				close(quickDone)
			}
			return json.RawMessage(`{"sent":true}`), nil
		},
	}
	h := newHarness(t, withTools(hang, quick))
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_deploy", Name: "deploy"}, fakemodel.Call{ID: "toolu_notify", Name: "notify"}))
	s := h.session()
	h.send(s.ID, "deploy and tell them")
	<-quickDone
	_, evs := h.waitFor(s.ID, "two tool calls", func(_ engine.Session, evs []engine.Event) bool { return count(evs, engine.EventToolCall) == 2 })
	if n := count(evs, engine.EventToolResult); n != 0 {
		t.Fatalf("%d results recorded while the first call runs", n)
	}
	h.crash(func() { close(release) }, withTools(hang, quick))
	_, evs = h.waitFor(s.ID, "interrupted", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusInterrupted })
	rs := results(t, evs)
	if len(rs) != 2 || rs[0].ProviderCallID != "toolu_deploy" || rs[1].ProviderCallID != "toolu_notify" ||
		!rs[0].Result.UnknownOutcome || !rs[1].Result.UnknownOutcome {
		t.Fatalf("recovered results: %+v", rs)
	}
	if hangs.Load() != 1 || quicks.Load() != 1 {
		t.Errorf("deploy ran %d times, notify %d; each once", hangs.Load(), quicks.Load())
	}
}
