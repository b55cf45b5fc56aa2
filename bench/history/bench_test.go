package historybench

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// echo is a zero-latency model: it answers every request (a turn's or a
// compaction's summary call) with a short text, so the benchmark times
// the engine and its store, not a model.
type echo struct{}

func (echo) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	return engine.ModelResponse{Text: "noted", Usage: engine.Usage{InputTokens: 100, OutputTokens: 2}}, nil
}

// sizes are the lengths of history measured, in events before the turn.
var sizes = []int{10, 1_000, 10_000, 100_000}

// BenchmarkTurn_History times a one-round turn (input recorded, turn
// started, model answered, turn completed: the engine's whole path) on a
// session with n prior events, reporting wall and CPU time per turn. The
// model sees about the same context at every n: past 10 events, a
// summary of the older turns (POST .../compact made it), then the turns
// after it.
func BenchmarkTurn_History(b *testing.B) {
	for _, driver := range []string{"sqlite", "postgres"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("store=%s/events=%d", driver, n), func(b *testing.B) {
				st := open(b, driver)
				benchTurns(b, st, n)
			})
		}
	}
}

func open(b *testing.B, driver string) store.Store {
	b.Helper()
	ctx := context.Background()
	var (
		st  store.Store
		err error
	)
	switch driver {
	case "sqlite":
		st, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	default:
		st, err = postgres.Open(ctx, pgtest.NewDatabase(b))
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func benchTurns(b *testing.B, st store.Store, n int) {
	ctx := context.Background()
	var ids atomic.Int64
	eng, err := engine.New(engine.Config{
		Store: st, Clock: time.Now,
		NewID:  func(p string) string { return fmt.Sprintf("%s_%d", p, ids.Add(1)) },
		Agents: []*engine.Agent{{Name: "a", Model: echo{}, ContextWindow: 4096, MaxTokens: 1024}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer eng.Stop(ctx)
	s, _, err := eng.CreateSession(ctx, engine.NewSession{Agent: "a"})
	if err != nil {
		b.Fatal(err)
	}
	seed(b, st, s.ID, n)
	if n > 10 {
		// A log this long has long been compacted: the model sees a
		// summary and the turns after it, as at n = 10.
		if _, err := eng.Compact(ctx, s.ID); err != nil {
			b.Fatal(err)
		}
	}
	turn := func(i int) {
		changed := eng.Changed(s.ID)
		ev, _, err := eng.Send(ctx, s.ID, engine.Input{Text: fmt.Sprintf("question %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		for {
			got, err := eng.Session(ctx, s.ID)
			if err != nil {
				b.Fatal(err)
			}
			if got.Status == engine.StatusIdle && got.Checkpoint > ev.Seq {
				return
			}
			if got.Status == engine.StatusFailed || got.Status == engine.StatusInterrupted {
				evs, _ := eng.Events(ctx, s.ID, got.Checkpoint, 0)
				b.Fatalf("the turn stopped (%s): %s", got.Status, evs[len(evs)-3].Data)
			}
			<-changed
			changed = eng.Changed(s.ID)
		}
	}
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

// seed writes n events of completed one-round turns to the session, as
// the engine would have (5 events a turn).
func seed(b *testing.B, st store.Store, id string, n int) {
	b.Helper()
	ctx := context.Background()
	var batch []engine.Event
	var seq, checkpoint, cursor int64
	add := func(turnID string, p engine.Payload) {
		ev, err := engine.NewEvent(p)
		if err != nil {
			b.Fatal(err)
		}
		seq++
		ev.ID, ev.TurnID = fmt.Sprintf("seed_%d", seq), turnID
		batch = append(batch, ev)
	}
	flush := func() {
		if len(batch) == 0 {
			return
		}
		cp, cur := checkpoint, cursor
		if _, err := st.Commit(ctx, engine.Commit{SessionID: id, Now: time.Now(), Events: batch, Update: func(s *engine.Session) error {
			s.Checkpoint, s.InputCursor = cp, cur
			return nil
		}}); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	text := strings.Repeat("words of a past exchange ", 8)
	turns := n / 5
	for t := 0; t < turns; t++ {
		tid := fmt.Sprintf("seedturn_%d", t)
		add("", engine.Input{Text: text})
		cursor = seq
		add(tid, engine.TurnStarted{InputIDs: []string{fmt.Sprintf("seed_%d", seq)}})
		add(tid, engine.AgentMessage{Text: text})
		add(tid, engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Rounds: 0, Usage: engine.Usage{InputTokens: 100, OutputTokens: 20}})
		checkpoint = seq
		add(tid, engine.SessionStatus{Status: engine.StatusIdle, Reason: "turn_completed"})
		if len(batch) >= 500 {
			flush()
		}
	}
	flush()
}
