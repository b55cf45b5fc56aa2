package retentionbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/audit"
	"brain/bot/governance"
	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// echo is a zero-latency model, so the turns time the engine and its
// store, not a model.
type echo struct{}

func (echo) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	return engine.ModelResponse{Text: "noted", Usage: engine.Usage{InputTokens: 100, OutputTokens: 2}}, nil
}

// expired is how many events the job deletes (BRAIN_BENCH_EVENTS
// overrides it for a quick look), in sessions of perSession events.
const (
	expired    = 1_000_000
	perSession = 1_000
	baseTurns  = 2_000
)

// BenchmarkRetention_TurnsWhileDeleting seeds a million events in
// sessions idle for 100 days, then times one-round turns on an active
// session: first with nothing deleted (the usual p99), then while the
// retention job (retention.sessions 90 days, batch 500, each batch
// audited) deletes them all. It reports both p99s, how long the deletion
// took, and its rate.
func BenchmarkRetention_TurnsWhileDeleting(b *testing.B) {
	total := expired
	if v, err := strconv.Atoi(os.Getenv("BRAIN_BENCH_EVENTS")); err == nil && v > 0 {
		total = v
	}
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run("store="+driver, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				run(b, open(b, driver), total)
			}
		})
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

func run(b *testing.B, st store.Store, total int) {
	ctx := context.Background()
	b.StopTimer()
	old := time.Now().Add(-100 * 24 * time.Hour)
	for i := 0; i*perSession < total; i++ {
		seed(b, st, fmt.Sprintf("old_%05d", i), old.Add(time.Duration(i)*time.Second), min(perSession, total-i*perSession))
	}
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
	var s engine.Session
	turn := func(i int) time.Duration {
		start := time.Now()
		if i%10 == 0 {
			// A fresh session every ten turns, so the context the model
			// is sent stays the same size in both phases.
			if s, _, err = eng.CreateSession(ctx, engine.NewSession{Agent: "a"}); err != nil {
				b.Fatal(err)
			}
		}
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
				return time.Since(start)
			}
			if got.Status == engine.StatusFailed || got.Status == engine.StatusInterrupted {
				b.Fatalf("the turn stopped (%s)", got.Status)
			}
			<-changed
			changed = eng.Changed(s.ID)
		}
	}
	for i := range 20 {
		turn(i) // warm the caches and the engine
	}
	base := make([]time.Duration, 0, baseTurns)
	for i := range baseTurns {
		base = append(base, turn(i))
	}

	timed := &timedStore{Store: st}
	job := &governance.Retention{Store: timed, Sessions: 90 * 24 * time.Hour, Every: time.Hour, Batch: 500,
		Trail: &audit.Recorder{Store: st, Now: time.Now}, Now: time.Now}
	done := make(chan error, 1)
	b.StartTimer()
	start := time.Now()
	go func() { done <- job.RunOnce(ctx) }()
	var during []time.Duration
	var took time.Duration
	for i := baseTurns; ; i++ {
		during = append(during, turn(i))
		select {
		case err := <-done:
			took = time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
		default:
			continue
		}
		break
	}
	b.StopTimer()
	left, _, err := st.ListSessions(ctx, store.SessionQuery{Until: time.Now().Add(-time.Hour), Limit: 10})
	if err != nil || len(left) != 0 {
		b.Fatalf("expired sessions left = %d, %v; want none", len(left), err)
	}
	b.ReportMetric(float64(pct(base, 50).Microseconds()), "base-p50-µs")
	b.ReportMetric(float64(pct(base, 99).Microseconds()), "base-p99-µs")
	b.ReportMetric(float64(pct(during, 50).Microseconds()), "deleting-p50-µs")
	b.ReportMetric(float64(pct(during, 99).Microseconds()), "deleting-p99-µs")
	b.ReportMetric(float64(len(during)), "turns-deleting")
	b.ReportMetric(float64(pct(timed.prune, 50).Microseconds()), "batch-p50-µs")
	b.ReportMetric(float64(pct(timed.prune, 99).Microseconds()), "batch-p99-µs")
	b.ReportMetric(float64(pct(timed.compact, 99).Microseconds()), "vacuum-p99-µs")
	b.ReportMetric(took.Seconds(), "delete-s")
	b.ReportMetric(float64(total)/took.Seconds(), "events-deleted/s")
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

// seed writes n events of completed one-round turns to a new session,
// last active at at, as the engine would have (5 events a turn).
func seed(b *testing.B, st store.Store, id string, at time.Time, n int) {
	b.Helper()
	ctx := context.Background()
	if _, _, err := st.CreateSession(ctx, engine.Session{ID: id, Agent: "a", Origin: engine.OriginAPI, Interactive: true,
		StartedBy: "U1", Status: engine.StatusIdle, CreatedAt: at, UpdatedAt: at}, ""); err != nil {
		b.Fatal(err)
	}
	var batch []engine.Event
	var seq int64
	add := func(turnID string, p engine.Payload) {
		ev, err := engine.NewEvent(p)
		if err != nil {
			b.Fatal(err)
		}
		seq++
		ev.ID, ev.TurnID = fmt.Sprintf("%s_%d", id, seq), turnID
		batch = append(batch, ev)
	}
	flush := func() {
		if len(batch) == 0 {
			return
		}
		last := seq
		if _, err := st.Commit(ctx, engine.Commit{SessionID: id, Now: at, Events: batch, Update: func(s *engine.Session) error {
			s.Checkpoint, s.InputCursor = last, last // every turn completed: nothing to run
			return nil
		}}); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	text := strings.Repeat("words of a past exchange ", 8)
	for t := 0; t < n/5; t++ {
		tid := fmt.Sprintf("%s_t%d", id, t)
		add("", engine.Input{Text: text, Author: "U1"})
		add(tid, engine.TurnStarted{InputIDs: []string{fmt.Sprintf("%s_%d", id, seq)}})
		add(tid, engine.AgentMessage{Text: text})
		add(tid, engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Usage: engine.Usage{InputTokens: 100, OutputTokens: 20}})
		add(tid, engine.SessionStatus{Status: engine.StatusIdle, Reason: "turn_completed"})
		if len(batch) >= 500 {
			flush()
		}
	}
	flush()
}

// timedStore times the retention job's batches and vacuum steps: how long
// a turn's commit may wait behind one.
type timedStore struct {
	store.Store
	prune, compact []time.Duration
}

func (t *timedStore) PruneSessions(ctx context.Context, before time.Time, limit int) (store.SessionsPruned, error) {
	start := time.Now()
	defer func() { t.prune = append(t.prune, time.Since(start)) }()
	return t.Store.PruneSessions(ctx, before, limit)
}

func (t *timedStore) Compact(ctx context.Context, pages int) (int, bool, error) {
	start := time.Now()
	defer func() { t.compact = append(t.compact, time.Since(start)) }()
	return t.Store.Compact(ctx, pages)
}
