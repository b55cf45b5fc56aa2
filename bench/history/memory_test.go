package historybench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/bench/benchkit"
	"brain/engine"
)

// held is a model that holds every call until released: a turn waiting
// on a slow provider, without the HTTP client's connection.
type held struct {
	calls   atomic.Int64
	release chan struct{}
}

func (m *held) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	m.calls.Add(1)
	select {
	case <-m.release:
	case <-ctx.Done():
		return engine.ModelResponse{}, ctx.Err()
	}
	return engine.ModelResponse{Text: "done", Usage: engine.Usage{InputTokens: 10, OutputTokens: 1}}, nil
}

// BenchmarkRunningTurns_Memory measures the engine's own memory and
// goroutines per running turn: 10,000 sessions (b.N is ignored), each with
// a turn waiting in the model, on SQLite. What the HTTP client of a real
// provider adds per call (a connection, its buffers and goroutines) is
// the rest of bench/load memory's per-turn RSS.
func BenchmarkRunningTurns_Memory(b *testing.B) {
	const n = 10_000
	st := benchkit.Open(b, "sqlite")
	ctx := context.Background()
	var ids atomic.Int64
	model := &held{release: make(chan struct{})}
	eng, err := engine.New(engine.Config{
		Store: st, Clock: time.Now,
		NewID:           func(p string) string { return fmt.Sprintf("%s_%d", p, ids.Add(1)) },
		Agents:          []*engine.Agent{{Name: "a", Model: model, ContextWindow: 200_000, MaxTokens: 1024}},
		MaxRunningTurns: n, MaxQueuedTurns: n,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer eng.Stop(ctx)
	defer close(model.release) // before Stop: the turns end
	before := memNow()
	g0 := runtime.NumGoroutine()
	b.ResetTimer()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= n; i = next.Add(1) {
				s, _, err := eng.CreateSession(ctx, engine.NewSession{Agent: "a"})
				if err == nil {
					_, _, err = eng.Send(ctx, s.ID, engine.Input{Text: fmt.Sprintf("wait for it %d", i)})
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for model.calls.Load() < n {
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	after := memNow()
	b.ReportMetric(float64(after-before)/1024/n, "KiB/turn")
	b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/turn")
}

// memNow is the heap in use and the goroutine stacks, after a GC.
func memNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
