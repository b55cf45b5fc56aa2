package contextbench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/anthropic"
	"brain/engine/model/fakemodel"
	"brain/store/sqlite"
	"brain/tools"
)

// Anthropic's published prices for Claude Sonnet 4.5, US dollars per
// million tokens: a cache write (5-minute cache) costs 1.25 times the
// input price, a cache read 0.1 times.
const (
	priceInput      = 3.00
	priceCacheWrite = 3.75
	priceCacheRead  = 0.30
)

// inputCost is what the input of u costs at those prices.
func inputCost(u engine.Usage) float64 {
	return (float64(u.UncachedInputTokens())*priceInput + float64(u.CacheWriteTokens)*priceCacheWrite +
		float64(u.CacheReadTokens)*priceCacheRead) / 1e6
}

// session is an engine with one agent talking to a fake model server.
type session struct {
	eng  *engine.Engine
	fake *fakemodel.Server
	st   *sqlite.Store
}

func newSession(tb testing.TB, fakeOpts []fakemodel.Option, parallel int, defs ...tools.Definition) *session {
	tb.Helper()
	fake := fakemodel.New(append(fakeOpts, fakemodel.WithRecordLimit(0))...)
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "brain.db"))
	if err != nil {
		tb.Fatal(err)
	}
	m, err := anthropic.New(anthropic.Config{BaseURL: fake.URL(), APIKey: "bench", Model: "claude-sonnet-4-5"})
	if err != nil {
		tb.Fatal(err)
	}
	agent := &engine.Agent{Name: "default", Model: m, MaxToolIterations: 25,
		Instructions: "You are a research agent. Use the tools to read pages, then answer."}
	for _, d := range defs {
		tool, err := tools.Compile(d)
		if err != nil {
			tb.Fatal(err)
		}
		agent.Tools = append(agent.Tools, tool)
	}
	var ids atomic.Int64
	eng, err := engine.New(engine.Config{
		Store: st, Agents: []*engine.Agent{agent}, Clock: time.Now, MaxParallelTools: parallel,
		NewID: func(p string) string { return fmt.Sprintf("%s_%08d", p, ids.Add(1)) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	s := &session{eng: eng, fake: fake, st: st}
	tb.Cleanup(s.close)
	return s
}

func (s *session) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.fake.Release()
	_ = s.eng.Stop(ctx)
	s.fake.Close()
	_ = s.st.Close()
}

// turn sends text to a new session and waits for its turn to end; it
// returns the turn's usage.
func (s *session) turn(tb testing.TB, text string) engine.Usage {
	tb.Helper()
	ctx := context.Background()
	ses, _, err := s.eng.CreateSession(ctx, engine.NewSession{Agent: "default", Interactive: true})
	if err != nil {
		tb.Fatal(err)
	}
	if _, _, err := s.eng.Send(ctx, ses.ID, engine.Input{Text: text}); err != nil {
		tb.Fatal(err)
	}
	for {
		changed := s.eng.Changed(ses.ID)
		evs, err := s.eng.Events(ctx, ses.ID, 0, 0)
		if err != nil {
			tb.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type != engine.EventTurnCompleted {
				continue
			}
			p, err := ev.Decode()
			if err != nil {
				tb.Fatal(err)
			}
			tc := p.(engine.TurnCompleted)
			if tc.Outcome != engine.OutcomeCompleted {
				tb.Fatalf("turn ended %s", tc.Outcome)
			}
			return tc.Usage
		}
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			tb.Fatal("the turn did not end")
		}
	}
}

// pageTool returns about 2 KB of text per page.
func pageTool() tools.Definition {
	return tools.Definition{
		Name: "fetch_page", Description: "Fetch a page of the report",
		Input: json.RawMessage(`{"type":"object","properties":{"page":{"type":"integer"}},"required":["page"]}`),
		Run: func(_ context.Context, c tools.Call) (json.RawMessage, error) {
			return json.Marshal(map[string]string{"body": string(c.Input) + strings.Repeat(" the quarterly numbers rose", 75)})
		},
	}
}

// rounds is the script of a turn with n tool rounds.
func rounds(n int) []fakemodel.Step {
	var steps []fakemodel.Step
	for i := 0; i < n; i++ {
		steps = append(steps, fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: fmt.Sprintf(`{"page":%d}`, i)}))
	}
	return append(steps, fakemodel.Text("The numbers rose every quarter."))
}

const toolRounds = 20

// toolSession runs one 20-round tool turn and returns its usage.
func toolSession(tb testing.TB, cached bool) engine.Usage {
	var opts []fakemodel.Option
	if !cached {
		opts = append(opts, fakemodel.WithoutCache())
	}
	s := newSession(tb, opts, 4, pageTool())
	s.fake.Push(rounds(toolRounds)...)
	return s.turn(tb, "Read the 20 pages of the report and tell me the trend.")
}

// BenchmarkToolSession20Rounds reports the input of a 20-round tool turn
// as billed with and without prompt caching.
func BenchmarkToolSession20Rounds(b *testing.B) {
	for _, cached := range []bool{false, true} {
		name := "uncached"
		if cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			var u engine.Usage
			for i := 0; i < b.N; i++ {
				u = toolSession(b, cached)
			}
			b.ReportMetric(float64(u.InputTokens), "input_tokens/op")
			b.ReportMetric(float64(u.CacheReadTokens), "cache_read_tokens/op")
			b.ReportMetric(inputCost(u)*1000, "input_millidollars/op")
		})
	}
}

// TestCachingBillsLess is the benchmark's claim as a test: with caching,
// a 20-round tool turn's input costs under a third of what it costs
// without, and the total input is the same.
func TestCachingBillsLess(t *testing.T) {
	plain, cached := toolSession(t, false), toolSession(t, true)
	if plain.InputTokens != cached.InputTokens || plain.CacheReadTokens != 0 {
		t.Fatalf("uncached %+v, cached %+v", plain, cached)
	}
	if inputCost(cached) >= inputCost(plain)/3 {
		t.Errorf("cached input $%.4f, uncached $%.4f: caching should cut it by more than two thirds", inputCost(cached), inputCost(plain))
	}
}

// sleepTool takes 200 ms, or less when its context ends.
func sleepTool() tools.Definition {
	return tools.Definition{
		Name: "slow_lookup", Description: "A lookup that takes 200 ms", Input: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, _ tools.Call) (json.RawMessage, error) {
			select {
			case <-time.After(200 * time.Millisecond):
				return json.RawMessage(`{"found":true}`), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}
}

// parallelRound runs a turn whose one round asks for 4 calls of 200 ms.
func parallelRound(tb testing.TB, s *session) {
	calls := make([]fakemodel.Call, 4)
	for i := range calls {
		calls[i] = fakemodel.Call{Name: "slow_lookup"}
	}
	s.fake.Push(fakemodel.ToolCalls(calls...), fakemodel.Text("Found all four."))
	s.turn(tb, "look up all four")
}

// BenchmarkRoundOf4ToolCalls is the wall time of a round with 4 tool
// calls of 200 ms each, one at a time and in parallel.
func BenchmarkRoundOf4ToolCalls(b *testing.B) {
	for _, parallel := range []int{1, 4} {
		name := "sequential"
		if parallel > 1 {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			s := newSession(b, nil, parallel, sleepTool())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				parallelRound(b, s)
			}
		})
	}
}

// TestReport prints the numbers the README quotes.
func TestReport(t *testing.T) {
	if testing.Short() {
		t.Skip("prints measurements")
	}
	plain, cached := toolSession(t, false), toolSession(t, true)
	t.Logf("20-round tool turn: input %d tokens; uncached $%.4f; cached $%.4f (read %d, written %d, uncached %d tokens): %.0f%% of the uncached cost",
		plain.InputTokens, inputCost(plain), inputCost(cached), cached.CacheReadTokens, cached.CacheWriteTokens,
		cached.UncachedInputTokens(), 100*inputCost(cached)/inputCost(plain))
	for _, parallel := range []int{1, 4} {
		s := newSession(t, nil, parallel, sleepTool())
		start := time.Now()
		parallelRound(t, s)
		t.Logf("round of 4 tool calls of 200 ms, max_parallel_tools %d: %s", parallel, time.Since(start).Round(time.Millisecond))
	}
}
