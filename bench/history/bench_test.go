package historybench

import (
	"context"
	"fmt"
	"sort"
	"syscall"
	"testing"
	"time"

	"brain/bench/benchkit"
	"brain/engine"
	"brain/store"
	"brain/store/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// sizes are the lengths of history measured, in events before the turn.
var sizes = []int{10, 1_000, 10_000, 100_000}

// BenchmarkTurn_History times a one-round turn (input recorded, turn
// started, model answered, turn completed: the engine's whole path) on a
// session with n prior events, reporting wall and CPU time per turn. The
// model sees about the same context at every n: past 10 events, a
// summary of the older turns (POST .../compact made it), then the turns
// after it.
func BenchmarkTurn_History(b *testing.B) {
	for _, driver := range benchkit.Drivers {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("store=%s/events=%d", driver, n), func(b *testing.B) {
				st := benchkit.Open(b, driver)
				benchTurns(b, st, n)
			})
		}
	}
}

func benchTurns(b *testing.B, st store.Store, n int) {
	ctx := context.Background()
	eng := benchkit.Engine(b, st)
	s, _, err := eng.CreateSession(ctx, engine.NewSession{Agent: "a"})
	if err != nil {
		b.Fatal(err)
	}
	benchkit.Seed(b, st, s.ID, "seed", time.Now(), n)
	if n > 10 {
		// A log this long has long been compacted: the model sees a
		// summary and the turns after it, as at n = 10.
		if _, err := eng.Compact(ctx, s.ID); err != nil {
			b.Fatal(err)
		}
	}
	turn := func(i int) { benchkit.Turn(b, eng, s.ID, fmt.Sprintf("question %d", i)) }
	turn(-1) // warm the caches and the engine
	walls := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		turn(i)
		walls = append(walls, time.Since(start))
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds()), "p50-µs/turn")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/turn")
}

// cpuTime is the CPU time (user and system) the process has used: the
// engine's and, for SQLite, the database's (PostgreSQL's own is in its
// server processes, not counted).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
