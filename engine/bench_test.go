package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/store/sqlite"
	"brain/tools"
)

// scriptedModel is an in-process, zero-latency model: it calls the noop tool
// for rounds rounds, then answers. It isolates the engine's own cost.
type scriptedModel struct{ rounds int }

func (m scriptedModel) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	done := 0
	if last := req.Messages[len(req.Messages)-1]; last.Role == engine.RoleUser {
		for i := len(req.Messages) - 1; i >= 0 && len(req.Messages[i].ToolResults) > 0; i -= 2 {
			done++
		}
	}
	if done >= m.rounds {
		return engine.ModelResponse{Text: "done"}, nil
	}
	return engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: fmt.Sprintf("call_%d", done), Name: "noop", Input: json.RawMessage(`{}`)}}}, nil
}

// BenchmarkEngine_ToolRound measures the engine's overhead per tool round
// (model response recorded, tool validated and run, result recorded; each a
// durable SQLite commit) against a zero-latency model. Each turn runs 5
// rounds in a fresh session; ns/round and p50-ns/round are reported.
func BenchmarkEngine_ToolRound(b *testing.B) {
	for _, sync := range []string{"full", "normal"} {
		b.Run("sync="+sync, func(b *testing.B) {
			const rounds = 5
			st, err := sqlite.OpenWithOptions(context.Background(), filepath.Join(b.TempDir(), "b.db"), sqlite.Options{Synchronous: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			noop, _ := tools.Compile(tools.Definition{
				Name: "noop", Description: "does nothing",
				Input: json.RawMessage(`{"type":"object"}`),
				Run: func(context.Context, tools.Call) (json.RawMessage, error) {
					return json.RawMessage(`{"ok":true}`), nil
				},
			})
			var ids atomic.Int64
			eng, err := engine.New(engine.Config{
				Store: st, Clock: time.Now,
				NewID:  func(p string) string { return fmt.Sprintf("%s_%d", p, ids.Add(1)) },
				Agents: []*engine.Agent{{Name: "a", Model: scriptedModel{rounds: rounds}, Tools: []*tools.Tool{noop}, MaxToolIterations: rounds + 1}},
			})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := eng.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer eng.Stop(ctx)
			perRound := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, _, err := eng.CreateSession(ctx, engine.NewSession{Agent: "a"})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				changed := eng.Changed(s.ID)
				if _, _, err := eng.Send(ctx, s.ID, engine.Input{Text: "go"}); err != nil {
					b.Fatal(err)
				}
				for {
					got, err := eng.Session(ctx, s.ID)
					if err != nil {
						b.Fatal(err)
					}
					if got.Checkpoint > 0 {
						break
					}
					<-changed
					changed = eng.Changed(s.ID)
				}
				perRound = append(perRound, time.Since(start)/rounds)
			}
			b.StopTimer()
			sort.Slice(perRound, func(i, j int) bool { return perRound[i] < perRound[j] })
			var total time.Duration
			for _, d := range perRound {
				total += d
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(len(perRound)), "ns/round")
			b.ReportMetric(float64(perRound[len(perRound)/2].Nanoseconds()), "p50-ns/round")
		})
	}
}
