package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/anthropic"
	"brain/engine/model/fakemodel"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
)

// Engines sharing one real PostgreSQL, as replicas do: fencing and the
// durable stop request, end to end through the engine.

// frozenLeases are the store's leases until freeze: then renewals no
// longer reach the store and report every lease still held, as a replica
// whose heartbeat stalled (a long pause) believes; its leases expire in
// the store meanwhile and another replica may take them.
type frozenLeases struct {
	engine.Leases
	frozen atomic.Bool
	mu     sync.Mutex
	keys   map[string]bool
}

func (f *frozenLeases) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	ok, err := f.Leases.ClaimLease(ctx, key, owner, now, until)
	if ok {
		f.mu.Lock()
		f.keys[key] = true
		f.mu.Unlock()
	}
	return ok, err
}

func (f *frozenLeases) RenewLeases(ctx context.Context, owner string, now, until time.Time) ([]engine.HeldLease, error) {
	if !f.frozen.Load() {
		return f.Leases.RenewLeases(ctx, owner, now, until)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var held []engine.HeldLease
	for k := range f.keys {
		held = append(held, engine.HeldLease{Key: k})
	}
	return held, nil
}

func (f *frozenLeases) ReleaseLease(ctx context.Context, key, owner string) error {
	f.mu.Lock()
	delete(f.keys, key)
	f.mu.Unlock()
	return f.Leases.ReleaseLease(ctx, key, owner)
}

// deafPeers are Peers whose notices never arrive (a dropped NOTIFY): a
// stop reaches the replica running the turn only through its lease.
type deafPeers struct{ asked atomic.Int64 }

func (d *deafPeers) StopTurn(context.Context, string, bool) error {
	d.asked.Add(1)
	return nil
}

// logBuffer collects an engine's log.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type pgReplica struct {
	eng    *engine.Engine
	leases *frozenLeases
	log    *logBuffer
}

// pgReplicas runs engines on one database, each with a store handle of
// its own, sharing leases through it.
type pgReplicas struct {
	t     *testing.T
	dsn   string
	fake  *fakemodel.Server
	peers engine.Peers
	ids   atomic.Int64
}

func newPGReplicas(t *testing.T, peers engine.Peers) *pgReplicas {
	r := &pgReplicas{t: t, dsn: pgtest.NewDatabase(t), fake: fakemodel.New(), peers: peers}
	t.Cleanup(r.fake.Close)
	return r
}

func (r *pgReplicas) newID(prefix string) string {
	return fmt.Sprintf("%s_%06d", prefix, r.ids.Add(1))
}

func (r *pgReplicas) replica(name string) *pgReplica {
	t := r.t
	t.Helper()
	st, err := postgres.Open(context.Background(), r.dsn)
	if err != nil {
		t.Fatal(err)
	}
	m, err := anthropic.New(anthropic.Config{BaseURL: r.fake.URL(), APIKey: "test-key", Model: "fake", MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	rep := &pgReplica{leases: &frozenLeases{Leases: st, keys: map[string]bool{}}, log: &logBuffer{}}
	rep.eng, err = engine.New(engine.Config{
		Store:   st,
		Agents:  []*engine.Agent{{Name: "default", Model: m, Instructions: "You are a test agent."}},
		Logger:  slog.New(slog.NewTextHandler(rep.log, nil)),
		Clock:   time.Now, // the sweeps compare UpdatedAt with the wall clock
		NewID:   r.newID,
		Leases:  rep.leases,
		Peers:   r.peers,
		Replica: name,
		// Short, so a takeover comes soon; long enough that a heartbeat
		// on a loaded machine (every ttl/3) keeps a live lease.
		LeaseTTL:     time.Second,
		PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.fake.Release()
		_ = rep.eng.Stop(ctx)
		_ = st.Close()
	})
	return rep
}

// waitFor re-reads the session until cond holds; the deadline only turns
// a hang into a failure.
func waitFor(t *testing.T, eng *engine.Engine, id, what string, cond func(engine.Session, []engine.Event) bool) (engine.Session, []engine.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := eng.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := eng.Events(ctx, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if cond(s, evs) {
			return s, evs
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; status %s, events:\n%s", what, s.Status, dumpEvents(evs))
		}
	}
}

func dumpEvents(evs []engine.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  %d %s %s %s\n", ev.Seq, ev.Type, ev.TurnID, ev.Data)
	}
	return b.String()
}

func countType(evs []engine.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func outcomes(t *testing.T, evs []engine.Event) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.Type != engine.EventTurnCompleted {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(p.(engine.TurnCompleted).Outcome))
	}
	return out
}

// startLongTurn creates a session on r, sends it input whose model call
// blocks until block closes, and waits for that call.
func startLongTurn(t *testing.T, rs *pgReplicas, r *pgReplica, block <-chan struct{}, then ...fakemodel.Step) (engine.Session, engine.Event) {
	t.Helper()
	rs.fake.Push(append([]fakemodel.Step{fakemodel.Block(block)}, then...)...)
	s, _, err := r.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Interactive: true, StartedBy: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := r.eng.Send(context.Background(), s.ID, engine.Input{Text: "long"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	return s, in
}

// A replica whose heartbeat stalls past the lease time loses the session
// to another replica, which recovers it; when the stalled replica's turn
// resumes, its next commit is fenced off: refused, the turn stops at once
// with a clear log line, and the session keeps the recovering replica's
// state.
func TestReplicas_CommitAfterTakeoverIsFenced(t *testing.T) {
	rs := newPGReplicas(t, &deafPeers{})
	a, b := rs.replica("a"), rs.replica("b")
	block := make(chan struct{})
	s, in := startLongTurn(t, rs, a, block, fakemodel.Text("written too late"))

	a.leases.frozen.Store(true) // a pauses: its lease runs out unrenewed
	recovered, evs := waitFor(t, b.eng, s.ID, "b to recover the session", func(s engine.Session, _ []engine.Event) bool {
		return s.Status == engine.StatusInterrupted
	})
	close(block) // a resumes: its model call answers, and a commits it
	waitFor(t, b.eng, s.ID, "a's turn to stop", func(engine.Session, []engine.Event) bool {
		return a.eng.Stats().RunningTurns == 0
	})

	got, after := waitFor(t, b.eng, s.ID, "the final state", func(engine.Session, []engine.Event) bool { return true })
	if got.Status != engine.StatusInterrupted || got.LastSeq != recovered.LastSeq || len(after) != len(evs) {
		t.Fatalf("a wrote after b recovered the session: status %s, %d events, want %d; events:\n%s",
			got.Status, len(after), len(evs), dumpEvents(after))
	}
	if n := countType(after, engine.EventAgentMessage); n != 0 {
		t.Fatalf("%d agent messages: the fenced commit was written; events:\n%s", n, dumpEvents(after))
	}
	if o := outcomes(t, after); len(o) != 1 {
		t.Fatalf("turn outcomes %v, want only the recovery's; events:\n%s", o, dumpEvents(after))
	}
	// The recovery's report of the input stands (the trust rules).
	reported := false
	for _, ev := range after {
		if ev.Type == engine.EventSessionError && strings.Contains(string(ev.Data), in.ID) {
			reported = true
		}
	}
	if !reported {
		t.Fatalf("the input was not reported by the recovery; events:\n%s", dumpEvents(after))
	}
	if log := a.log.String(); !strings.Contains(log, "lost the session's lease to another replica") {
		t.Fatalf("a's log does not say why the turn stopped:\n%s", log)
	}
}

// Cancel on one replica stops the turn another runs even when the notice
// to the peers is lost: the request is on the session's lease, and the
// replica running the turn finds it on its heartbeat.
func TestReplicas_CancelWithoutNotifyStopsTheTurn(t *testing.T) {
	peers := &deafPeers{}
	rs := newPGReplicas(t, peers)
	a, b := rs.replica("a"), rs.replica("b")
	block := make(chan struct{})
	defer close(block)
	s, _ := startLongTurn(t, rs, a, block)
	queued, _, err := b.eng.Send(context.Background(), s.ID, engine.Input{Text: "queued"})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := b.eng.Cancel(ctx, s.ID)
	if err != nil {
		t.Fatalf("cancel on b: %v", err)
	}
	if got.Status != engine.StatusIdle {
		t.Fatalf("status after cancel = %s, want idle", got.Status)
	}
	if peers.asked.Load() == 0 {
		t.Fatal("the peers were not asked (the fast path)")
	}
	_, evs := waitFor(t, b.eng, s.ID, "the cancelled turn", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && countType(evs, engine.EventTurnCompleted) == 1
	})
	if o := outcomes(t, evs); len(o) != 1 || o[0] != string(engine.OutcomeCancelled) {
		t.Fatalf("turn outcomes %v, want [cancelled]; events:\n%s", o, dumpEvents(evs))
	}
	for _, ev := range evs {
		if ev.Type == engine.EventTurnStarted && strings.Contains(string(ev.Data), queued.ID) {
			t.Fatalf("the queued input ran after the cancel; events:\n%s", dumpEvents(evs))
		}
	}
}

// Input in interrupt mode sent to one replica interrupts the turn another
// runs even when the notice is lost, and then runs, once; the stop request
// left on the lease does not touch that next turn.
func TestReplicas_InterruptWithoutNotifyStopsTheTurn(t *testing.T) {
	rs := newPGReplicas(t, &deafPeers{})
	a, b := rs.replica("a"), rs.replica("b")
	block := make(chan struct{})
	defer close(block)
	s, _ := startLongTurn(t, rs, a, block, fakemodel.Text("never sent"))
	rs.fake.Push(fakemodel.Text("second done"))
	second, _, err := b.eng.Send(context.Background(), s.ID, engine.Input{Text: "second", Mode: engine.ModeInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	_, evs := waitFor(t, b.eng, s.ID, "the interrupted turn and the next", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && countType(evs, engine.EventTurnCompleted) == 2
	})
	if o := outcomes(t, evs); len(o) != 2 || o[0] != string(engine.OutcomeCancelled) || o[1] == string(engine.OutcomeCancelled) {
		t.Fatalf("turn outcomes %v, want the first cancelled and the second run; events:\n%s", o, dumpEvents(evs))
	}
	var last engine.Event
	for _, ev := range evs {
		if ev.Type == engine.EventTurnStarted {
			last = ev
		}
	}
	if !strings.Contains(string(last.Data), second.ID) {
		t.Fatalf("the second turn did not take the new input; events:\n%s", dumpEvents(evs))
	}
	if n := countType(evs, engine.EventAgentMessage); n != 1 {
		t.Fatalf("%d agent messages, want the second turn's; events:\n%s", n, dumpEvents(evs))
	}
}

// The same with the session's lease held by the other replica when the
// stalled one commits: b recovered the session and runs a new turn of it;
// a's late commit is refused, and b's turn, and only it, is recorded.
func TestReplicas_CommitWhileAnotherReplicaHoldsTheSessionIsFenced(t *testing.T) {
	rs := newPGReplicas(t, &deafPeers{})
	a, b := rs.replica("a"), rs.replica("b")
	blockA, blockB := make(chan struct{}), make(chan struct{})
	s, _ := startLongTurn(t, rs, a, blockA)

	a.leases.frozen.Store(true)
	waitFor(t, b.eng, s.ID, "b to recover the session", func(s engine.Session, _ []engine.Event) bool {
		return s.Status == engine.StatusInterrupted
	})
	ctx := context.Background()
	if _, err := b.eng.Resume(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	rs.fake.Push(fakemodel.Block(blockB))
	again, _, err := b.eng.Send(ctx, s.ID, engine.Input{Text: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.fake.WaitRequests(ctx, 2); err != nil { // b's turn holds the lease and waits on its model
		t.Fatal(err)
	}

	rs.fake.Push(fakemodel.Text("written too late"))
	close(blockA) // a resumes and commits its answer
	waitFor(t, b.eng, s.ID, "a's turn to stop", func(engine.Session, []engine.Event) bool {
		return a.eng.Stats().RunningTurns == 0
	})
	if log := a.log.String(); !strings.Contains(log, "lost the session's lease to another replica") || !strings.Contains(log, "held by b") {
		t.Fatalf("a's log does not say its lease went to b:\n%s", log)
	}

	rs.fake.Push(fakemodel.Text("b done"))
	close(blockB)
	_, evs := waitFor(t, b.eng, s.ID, "b's turn", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && countType(evs, engine.EventTurnCompleted) == 2
	})
	var texts []string
	for _, ev := range evs {
		if ev.Type == engine.EventAgentMessage {
			texts = append(texts, string(ev.Data))
		}
	}
	if len(texts) != 1 || !strings.Contains(texts[0], "b done") {
		t.Fatalf("agent messages %v, want only b's; events:\n%s", texts, dumpEvents(evs))
	}
	var last engine.Event
	for _, ev := range evs {
		if ev.Type == engine.EventTurnStarted {
			last = ev
		}
	}
	if !strings.Contains(string(last.Data), again.ID) {
		t.Fatalf("b's turn did not take the new input; events:\n%s", dumpEvents(evs))
	}
}
