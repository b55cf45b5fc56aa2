package retentionbench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"brain/bench/benchkit"
	"brain/bot/audit"
	"brain/bot/governance"
	"brain/engine"
	"brain/store"
	"brain/store/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// expired is how many events the job deletes (BRAIN_BENCH_EVENTS
// overrides it for a quick look), in sessions of perSession events.
const (
	expired    = 1_000_000
	perSession = 1_000
	baseTurns  = 2_000
	// deletingWindow turns while the job runs, then pausedWindow while it
	// is held, and again, until it is done.
	deletingWindow = 100
	pausedWindow   = 50
)

// BenchmarkRetention_TurnsWhileDeleting seeds a million events in
// sessions idle for 100 days, then times one-round turns on an active
// session, answered by each of the models: first with nothing deleted
// (the usual p99), then while the retention job (retention.sessions 90
// days, batches of at most 500 sized to the default batch time, audited
// as the job does) deletes them all, then with nothing deleted again,
// then an A/A control. It reports the
// p99s, the deleting/paused ratio beside the control's, how long the
// deletion took, and its rate.
func BenchmarkRetention_TurnsWhileDeleting(b *testing.B) {
	total := expired
	if v, err := strconv.Atoi(os.Getenv("BRAIN_BENCH_EVENTS")); err == nil && v > 0 {
		total = v
	}
	for _, driver := range benchkit.Drivers {
		for _, m := range models {
			b.Run("store="+driver+"/model="+m.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					run(b, benchkit.Open(b, driver), m, total)
				}
			})
		}
	}
}

// models are the two workloads the turns are timed on. "instant" answers
// at once: turns run back to back, the store's writer always busy with
// one, the worst case for the job (it never finds a moment no turn
// works). "50ms" answers after 50 ms, a fast model's round trip (real
// ones take seconds): a turn's engine work comes in short stretches
// between waits, as on a real deployment.
var models = []workload{
	{"instant", benchkit.Echo{}, baseTurns},
	{"50ms", benchkit.Delayed{Latency: 50 * time.Millisecond}, baseTurns / 5},
}

type workload struct {
	name  string
	model engine.Model
	// base is how many turns are timed before the job and after it.
	base int
}

func run(b *testing.B, st store.Store, m workload, total int) {
	ctx := context.Background()
	b.StopTimer()
	old := time.Now().Add(-100 * 24 * time.Hour)
	for i := 0; i*perSession < total; i++ {
		seed(b, st, fmt.Sprintf("old_%05d", i), old.Add(time.Duration(i)*time.Second), min(perSession, total-i*perSession))
	}
	eng := benchkit.EngineWith(b, st, m.model)
	var s engine.Session
	turn := func(i int) time.Duration {
		start := time.Now()
		if i%10 == 0 {
			// A fresh session every ten turns, so the context the model
			// is sent stays the same size in both phases.
			var err error
			if s, _, err = eng.CreateSession(ctx, engine.NewSession{Agent: "a"}); err != nil {
				b.Fatal(err)
			}
		}
		benchkit.Turn(b, eng, s.ID, fmt.Sprintf("question %d", i))
		return time.Since(start)
	}
	for i := range 20 {
		turn(i) // warm the caches and the engine
	}
	base := make([]time.Duration, 0, m.base)
	for i := range m.base {
		base = append(base, turn(i))
	}

	timed := &timedStore{Store: st, gate: newGate()}
	duty, _ := strconv.ParseFloat(os.Getenv("BRAIN_BENCH_DUTY"), 64) // 0: the default
	job := &governance.Retention{Store: timed, Sessions: 90 * 24 * time.Hour, Every: time.Hour, Batch: 500,
		// The job asks how many turns run before each step: it is held
		// there while paused, so the hold is not timed as a step's (and
		// the pace does not size the next by it).
		Turns: func() int { timed.gate.wait(); return eng.Stats().RunningTurns }, Duty: duty,
		Trail: &audit.Recorder{Store: timed, Now: time.Now}, Now: time.Now}
	done := make(chan error, 1)
	b.StartTimer()
	start := time.Now()
	go func() { done <- job.RunOnce(ctx) }()
	// Windows of turns while the job deletes alternate with windows while
	// it is held between two steps (paused): both sample the same load of
	// the machine, which moves during a run as much as the job's effect.
	var during, paused []time.Duration
	var took time.Duration
	i := m.base
	for took == 0 {
		for range deletingWindow {
			during = append(during, turn(i))
			i++
		}
		select {
		case err := <-done:
			took = time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			continue
		default:
		}
		timed.gate.pause() // returns once no step is under way
		for range pausedWindow {
			paused = append(paused, turn(i))
			i++
		}
		timed.gate.resume()
	}
	b.StopTimer()
	// The usual turns again, after: the machine's load moves during a
	// run, so the two bracket the deletion.
	after := make([]time.Duration, 0, m.base)
	for range m.base {
		after = append(after, turn(i))
		i++
	}
	// The control: as many windows of each size again with nothing
	// deleted in either. Its p99 ratio is what two samples of these sizes
	// differ by when nothing differs, the noise the deleting/paused ratio
	// is read against.
	var controlA, controlB []time.Duration
	for range len(paused) / pausedWindow {
		for range deletingWindow {
			controlA = append(controlA, turn(i))
			i++
		}
		for range pausedWindow {
			controlB = append(controlB, turn(i))
			i++
		}
	}
	left, _, err := st.ListSessions(ctx, store.SessionQuery{Until: time.Now().Add(-time.Hour), Limit: 10})
	if err != nil || len(left) != 0 {
		b.Fatalf("expired sessions left = %d, %v; want none", len(left), err)
	}
	b.ReportMetric(float64(pct(base, 50).Microseconds()), "base-p50-µs")
	b.ReportMetric(float64(pct(base, 99).Microseconds()), "base-p99-µs")
	b.ReportMetric(float64(pct(during, 50).Microseconds()), "deleting-p50-µs")
	b.ReportMetric(float64(pct(during, 99).Microseconds()), "deleting-p99-µs")
	b.ReportMetric(float64(pct(after, 50).Microseconds()), "after-p50-µs")
	b.ReportMetric(float64(pct(after, 99).Microseconds()), "after-p99-µs")
	b.ReportMetric(float64(pct(paused, 50).Microseconds()), "paused-p50-µs")
	b.ReportMetric(float64(pct(paused, 99).Microseconds()), "paused-p99-µs")
	if len(controlB) > 0 {
		b.ReportMetric(float64(pct(controlA, 99).Microseconds()), "control-a-p99-µs")
		b.ReportMetric(float64(pct(controlB, 99).Microseconds()), "control-b-p99-µs")
		b.ReportMetric(float64(pct(controlA, 99))/float64(pct(controlB, 99)), "control-p99-ratio")
		b.ReportMetric(float64(pct(during, 99))/float64(pct(paused, 99)), "deleting/paused-p99-ratio")
	}
	b.ReportMetric(float64(len(paused)), "turns-paused")
	b.ReportMetric(float64(len(during)), "turns-deleting")
	b.ReportMetric(float64(len(timed.prune)), "batches")
	b.ReportMetric(float64(pct(timed.prune, 50).Microseconds()), "batch-p50-µs")
	b.ReportMetric(float64(pct(timed.prune, 99).Microseconds()), "batch-p99-µs")
	b.ReportMetric(float64(pct(timed.compact, 99).Microseconds()), "vacuum-p99-µs")
	b.ReportMetric(float64(len(timed.compact)), "vacuum-steps")
	b.ReportMetric(float64(sum(timed.prune)+sum(timed.compact))/float64(took), "job-share")
	b.ReportMetric(took.Seconds(), "delete-s")
	b.ReportMetric(float64(total)/took.Seconds(), "events-deleted/s")
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

// seed makes session id, last active at at, with n events of completed
// turns.
func seed(b *testing.B, st store.Store, id string, at time.Time, n int) {
	b.Helper()
	if _, _, err := st.CreateSession(context.Background(), engine.Session{ID: id, Agent: "a", Origin: engine.OriginAPI, Interactive: true,
		StartedBy: "U1", Status: engine.StatusIdle, CreatedAt: at, UpdatedAt: at}, ""); err != nil {
		b.Fatal(err)
	}
	benchkit.Seed(b, st, id, id, at, n)
}

// timedStore times the retention job's batches and vacuum steps (how
// long a turn's commit may wait behind one) and holds the job between two
// steps while its gate is paused.
type timedStore struct {
	store.Store
	gate           *gate
	prune, compact []time.Duration
}

func (t *timedStore) PruneSessions(ctx context.Context, before time.Time, limit int) (store.SessionsPruned, error) {
	defer t.gate.enter()()
	start := time.Now()
	defer func() { t.prune = append(t.prune, time.Since(start)) }()
	return t.Store.PruneSessions(ctx, before, limit)
}

func (t *timedStore) Compact(ctx context.Context, pages int) (int, bool, error) {
	defer t.gate.enter()()
	start := time.Now()
	defer func() { t.compact = append(t.compact, time.Since(start)) }()
	return t.Store.Compact(ctx, pages)
}

func (t *timedStore) AppendAudit(ctx context.Context, recs ...store.AuditRecord) ([]store.AuditEntry, error) {
	defer t.gate.enter()()
	return t.Store.AppendAudit(ctx, recs...)
}

// gate holds the job's steps while paused.
type gate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	busy   int
}

func newGate() *gate {
	g := &gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// enter waits while the gate is paused and returns the step's exit.
func (g *gate) enter() func() {
	g.mu.Lock()
	for g.paused {
		g.cond.Wait()
	}
	g.busy++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.busy--
		g.cond.Broadcast()
		g.mu.Unlock()
	}
}

// wait returns once the gate is open.
func (g *gate) wait() {
	g.mu.Lock()
	for g.paused {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

// pause holds the next step and waits for the one under way to end.
func (g *gate) pause() {
	g.mu.Lock()
	g.paused = true
	for g.busy > 0 {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

func (g *gate) resume() {
	g.mu.Lock()
	g.paused = false
	g.cond.Broadcast()
	g.mu.Unlock()
}
