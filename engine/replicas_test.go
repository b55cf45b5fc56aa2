package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
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

// replica is an engine of its own, with its own store handle, on the
// harness's database, sharing leases through the store as replicas on
// PostgreSQL do (SQLite's implementation serves here).
type replica struct {
	eng    *engine.Engine
	store  *sqlite.Store
	leases *killableLeases
}

// killableLeases are the store's leases until kill: then they stop
// reaching the store, and renewals pretend to succeed, as a replica that
// froze or died does (its leases expire in the store; it never notices).
type killableLeases struct {
	engine.Leases
	dead atomic.Bool
	// cut: the store cannot be reached (every call fails).
	cut  atomic.Bool
	mu   sync.Mutex
	keys map[string]bool
	// claims and releases count, by key, the claims the store granted and
	// the releases that reached it.
	claims, releases map[string]int
	// stale names keys whose claims report granted without reaching the
	// store: a replica that held them, stalled, and lost them meanwhile.
	stale sync.Map
}

var errCut = errors.New("database unreachable")

func (k *killableLeases) ClaimLease(ctx context.Context, key, owner string, now, until time.Time) (bool, error) {
	if k.cut.Load() {
		return false, errCut
	}
	if k.dead.Load() {
		return false, nil
	}
	if _, ok := k.stale.Load(key); ok {
		return true, nil
	}
	ok, err := k.Leases.ClaimLease(ctx, key, owner, now, until)
	if ok {
		k.mu.Lock()
		k.keys[key] = true
		k.claims[key]++
		k.mu.Unlock()
	}
	return ok, err
}

func (k *killableLeases) RenewLeases(ctx context.Context, owner string, now, until time.Time) ([]engine.HeldLease, error) {
	if k.cut.Load() {
		return nil, errCut
	}
	if !k.dead.Load() {
		return k.Leases.RenewLeases(ctx, owner, now, until)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var held []engine.HeldLease
	for key := range k.keys {
		held = append(held, engine.HeldLease{Key: key})
	}
	return held, nil
}

func (k *killableLeases) ReleaseLease(ctx context.Context, key, owner string) error {
	k.mu.Lock()
	delete(k.keys, key)
	k.releases[key]++
	k.mu.Unlock()
	if k.dead.Load() {
		return nil
	}
	return k.Leases.ReleaseLease(ctx, key, owner)
}

// peerList is the replicas' Peers: a request to stop a turn reaches every
// replica, as NOTIFY does on PostgreSQL.
type peerList struct {
	mu   sync.Mutex
	engs []*engine.Engine
	// deaf: the requests never arrive (a dropped NOTIFY).
	deaf atomic.Bool
}

func (p *peerList) add(e *engine.Engine) {
	p.mu.Lock()
	p.engs = append(p.engs, e)
	p.mu.Unlock()
}

func (p *peerList) StopTurn(_ context.Context, sessionID string, interrupt bool) error {
	if p.deaf.Load() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.engs {
		e.CancelLocalTurn(sessionID, interrupt)
	}
	return nil
}

func (h *harness) replica(name string, defs ...tools.Definition) *replica {
	h.t.Helper()
	st, err := sqlite.Open(context.Background(), h.path)
	if err != nil {
		h.t.Fatal(err)
	}
	m, err := anthropic.New(anthropic.Config{BaseURL: h.fake.URL(), APIKey: "test-key", Model: "fake", MaxRetries: 0})
	if err != nil {
		h.t.Fatal(err)
	}
	leases := &killableLeases{Leases: st, keys: map[string]bool{}, claims: map[string]int{}, releases: map[string]int{}}
	if h.peers == nil {
		h.peers = &peerList{}
	}
	agent := &engine.Agent{Name: "default", Model: m, Instructions: "You are a test agent."}
	for _, d := range defs {
		tool, err := tools.Compile(d)
		if err != nil {
			h.t.Fatal(err)
		}
		agent.Tools = append(agent.Tools, tool)
	}
	eng, err := engine.New(engine.Config{
		Store:        st,
		Agents:       []*engine.Agent{agent},
		Clock:        h.clock,
		NewID:        h.newID,
		Leases:       leases,
		Peers:        h.peers,
		Replica:      name,
		LeaseTTL:     300 * time.Millisecond,
		PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	r := &replica{eng: eng, store: st, leases: leases}
	h.peers.add(eng)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.fake.Release()
		_ = eng.Stop(ctx)
		_ = st.Close()
	})
	return r
}

// pollFor re-reads the session until cond holds: the replicas' commits
// reach no common hub, so it polls. The deadline only turns a hang into a
// failure.
func pollFor(t *testing.T, eng *engine.Engine, id, what string, cond func(engine.Session, []engine.Event) bool) (engine.Session, []engine.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
			t.Fatalf("timed out waiting for %s; status %s, events:\n%s", what, s.Status, dump(evs))
		}
	}
}

// inputsRun counts, per input id, the turns that took it.
func inputsRun(t *testing.T, evs []engine.Event) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, ev := range ofType(evs, engine.EventTurnStarted) {
		p, err := ev.Decode()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range p.(engine.TurnStarted).InputIDs {
			out[id]++
		}
	}
	return out
}

// Input a replica accepts while another runs the session's turn is not
// run beside it: it runs after, once, on whichever replica takes it.
func TestReplicas_InputWhileAnotherReplicaRunsTheTurn(t *testing.T) {
	h := newReplicaHarness(t)
	a, b := h.replica("a"), h.replica("b")
	block := make(chan struct{})
	h.fake.Push(fakemodel.Block(block), fakemodel.Text("second done"))

	s := a.newSession(t)
	first, _, err := a.eng.Send(context.Background(), s.ID, engine.Input{Text: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	second, _, err := b.eng.Send(context.Background(), s.ID, engine.Input{Text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	close(block)
	_, evs := pollFor(t, b.eng, s.ID, "two turns", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && count(evs, engine.EventTurnCompleted) == 2
	})
	runs := inputsRun(t, evs)
	if len(runs) != 2 || runs[first.ID] != 1 || runs[second.ID] != 1 {
		t.Fatalf("inputs run %v, want each of %s and %s once; events:\n%s", runs, first.ID, second.ID, dump(evs))
	}
}

// A replica that dies mid-turn stops renewing its lease; once it expires
// another replica recovers the session as a restart does: interrupted,
// with the turn's input reported.
func TestReplicas_DeadReplicasSessionIsRecovered(t *testing.T) {
	h := newReplicaHarness(t)
	a, b := h.replica("a"), h.replica("b")
	block := make(chan struct{})
	t.Cleanup(func() { close(block) }) // the dead replica's turn ends at cleanup, after the checks
	h.fake.Push(fakemodel.Block(block))

	s, in := h.turnAtTheModel(a)
	a.leases.dead.Store(true)

	_, evs := pollFor(t, b.eng, s.ID, "recovery by b", func(s engine.Session, _ []engine.Event) bool {
		return s.Status == engine.StatusInterrupted
	})
	errs := sessionErrors(t, evs)
	if len(errs) != 1 || errs[0].InputID != in.ID || errs[0].Code != engine.CodeInterrupted {
		t.Fatalf("session errors %+v; events:\n%s", errs, dump(evs))
	}
	if got := count(evs, engine.EventTurnCompleted); got != 1 {
		t.Fatalf("%d turn.completed, want the one recovery wrote", got)
	}
}

// newSession creates an interactive session on r.
func (r *replica) newSession(t *testing.T) engine.Session {
	t.Helper()
	s, _, err := r.eng.CreateSession(context.Background(), engine.NewSession{Agent: "default", Interactive: true, StartedBy: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// turnAtTheModel starts a turn on r and waits until its model call has
// arrived (the fake's next step decides how it answers); it returns the
// session and the turn's input.
func (h *harness) turnAtTheModel(r *replica) (engine.Session, engine.Event) {
	h.t.Helper()
	s := r.newSession(h.t)
	in, _, err := r.eng.Send(context.Background(), s.ID, engine.Input{Text: "long"})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.fake.WaitRequests(context.Background(), 1); err != nil {
		h.t.Fatal(err)
	}
	return s, in
}

func newReplicaHarness(t *testing.T) *harness {
	h := &harness{t: t, now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	h.fake = fakemodel.New()
	t.Cleanup(h.fake.Close)
	h.path = t.TempDir() + "/brain.db"
	return h
}

// proposeOn runs a turn on r in which the model proposes one deploy and
// returns the pending approval.
func proposeOn(t *testing.T, r *replica, s engine.Session) engine.Approval {
	t.Helper()
	if _, _, err := r.eng.Send(context.Background(), s.ID, engine.Input{Text: "deploy the api"}); err != nil {
		t.Fatal(err)
	}
	pollFor(t, r.eng, s.ID, "the proposal", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && count(evs, engine.EventTurnCompleted) == 1
	})
	list, err := r.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: s.ID, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %v %+v", err, list)
	}
	return list[0]
}

// Decisions racing on two replicas: one is recorded, the apply runs once.
func TestReplicas_ConcurrentDecisionsApplyOnce(t *testing.T) {
	h := newReplicaHarness(t)
	d := &deployTool{}
	a, b := h.replica("a", d.def()), h.replica("b", d.def())
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_deploy", Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	s := a.newSession(t)
	ap := proposeOn(t, a, s)
	var wg sync.WaitGroup
	var won atomic.Int64
	for i := range 20 {
		r := a
		if i%2 == 1 {
			r = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.eng.Decide(context.Background(), ap.ID, engine.Decision{Approve: true, By: "tester"}); err == nil {
				won.Add(1)
			} else if !errors.Is(err, engine.ErrConflict) {
				t.Errorf("decide: %v", err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d decisions recorded, want 1", won.Load())
	}
	pollFor(t, b.eng, s.ID, "applied", func(engine.Session, []engine.Event) bool {
		got, _ := b.eng.Approval(context.Background(), ap.ID)
		return got.Status == engine.ApprovalApplied
	})
	if n := d.applies.Load(); n != 1 {
		t.Fatalf("applied %d times, want once", n)
	}
}

// A decision whose replica lost the apply's lease to another one (it
// stalled past the lease) is refused by the fence with 409, nothing
// recorded or applied.
func TestReplicas_FencedDecisionConflicts(t *testing.T) {
	h := newReplicaHarness(t)
	d := &deployTool{}
	a := h.replica("a", d.def())
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_deploy", Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	s := a.newSession(t)
	ap := proposeOn(t, a, s)
	key := "apply:" + ap.ID
	now := time.Now()
	if ok, err := a.store.ClaimLease(context.Background(), key, "another-replica", now, now.Add(time.Hour)); err != nil || !ok {
		t.Fatalf("the other replica's claim: %v %v", ok, err)
	}
	a.leases.stale.Store(key, true)
	_, err := a.eng.Decide(context.Background(), ap.ID, engine.Decision{Approve: true, By: "tester"})
	if !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "taken over by another replica") {
		t.Fatalf("fenced decision: %v, want a conflict naming the takeover", err)
	}
	if got, err := a.eng.Approval(context.Background(), ap.ID); err != nil || got.Status != engine.ApprovalPending {
		t.Fatalf("approval after the fenced decision: %+v %v, want still pending", got.Status, err)
	}
	if n := d.applies.Load(); n != 0 {
		t.Fatalf("applied %d times, want never", n)
	}
}

// A replica that dies mid-apply leaves the approval unconfirmed (another
// replica marks it once the apply's lease expires), never applied again.
func TestReplicas_DeadReplicasApplyIsUnconfirmed(t *testing.T) {
	h := newReplicaHarness(t)
	hang := make(chan struct{})
	d := &deployTool{applyFunc: func(ctx context.Context, _ tools.Decision) (json.RawMessage, error) {
		select {
		case <-hang:
		case <-ctx.Done():
		}
		return nil, ctx.Err()
	}}
	a, b := h.replica("a", d.def()), h.replica("b", d.def())
	t.Cleanup(func() { close(hang) }) // before the replicas stop: the dead one's apply ends
	h.fake.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_deploy", Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	s := a.newSession(t)
	ap := proposeOn(t, a, s)
	if _, err := a.eng.Decide(context.Background(), ap.ID, engine.Decision{Approve: true, By: "tester"}); err != nil {
		t.Fatal(err)
	}
	pollFor(t, b.eng, s.ID, "the apply started", func(engine.Session, []engine.Event) bool { return d.applies.Load() == 1 })
	a.leases.dead.Store(true)
	pollFor(t, b.eng, s.ID, "unconfirmed", func(engine.Session, []engine.Event) bool {
		got, _ := b.eng.Approval(context.Background(), ap.ID)
		return got.Status == engine.ApprovalUnconfirmed
	})
	if n := d.applies.Load(); n != 1 {
		t.Fatalf("applied %d times, want once", n)
	}
}

// Cancel on one replica stops the turn another runs, and drops the input
// queued behind it, as it does on one process.
func TestReplicas_CancelStopsTheTurnAnotherReplicaRuns(t *testing.T) {
	h := newReplicaHarness(t)
	a, b := h.replica("a"), h.replica("b")
	block := make(chan struct{})
	defer close(block)
	h.fake.Push(fakemodel.Block(block))
	s, _ := h.turnAtTheModel(a)
	queued, _, err := b.eng.Send(context.Background(), s.ID, engine.Input{Text: "queued"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := b.eng.Cancel(ctx, s.ID)
	if err != nil {
		evs, _ := b.eng.Events(context.Background(), s.ID, 0, 0)
		t.Fatalf("cancel on b: %v; events:\n%s", err, dump(evs))
	}
	if got.Status != engine.StatusIdle {
		t.Fatalf("status after cancel = %s", got.Status)
	}
	_, evs := pollFor(t, a.eng, s.ID, "the cancelled turn", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && count(evs, engine.EventTurnCompleted) == 1
	})
	var outcome engine.Outcome
	for _, ev := range ofType(evs, engine.EventTurnCompleted) {
		p, _ := ev.Decode()
		outcome = p.(engine.TurnCompleted).Outcome
	}
	if outcome != engine.OutcomeCancelled {
		t.Fatalf("turn outcome %q, want cancelled; events:\n%s", outcome, dump(evs))
	}
	if runs := inputsRun(t, evs); runs[queued.ID] != 0 {
		t.Fatalf("the queued input ran after the cancel; events:\n%s", dump(evs))
	}
}

// A replica that cannot renew its leases past their time stops its turn
// without recording anything: the replica taking the session over records
// its end, once.
func TestReplicas_LostLeaseStopsTheTurnWithoutWriting(t *testing.T) {
	h := newReplicaHarness(t)
	a, b := h.replica("a"), h.replica("b")
	block := make(chan struct{})
	defer close(block)
	h.fake.Push(fakemodel.Block(block))
	s, in := h.turnAtTheModel(a)
	a.leases.cut.Store(true)
	pollFor(t, b.eng, s.ID, "b to recover the session", func(s engine.Session, _ []engine.Event) bool {
		return s.Status == engine.StatusInterrupted
	})
	// a stops its turn once its lease ran out; then nothing more of it
	// can reach the log.
	pollFor(t, b.eng, s.ID, "a's turn to stop", func(engine.Session, []engine.Event) bool {
		return a.eng.Stats().RunningTurns == 0
	})
	evs, err := b.eng.Events(context.Background(), s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The report is the recovery's (interrupted, as after a crash), not a
	// failure the replica that lost the lease wrote.
	errs := sessionErrors(t, evs)
	if len(errs) != 1 || errs[0].InputID != in.ID || errs[0].Code != engine.CodeInterrupted || count(evs, engine.EventTurnCompleted) != 1 {
		t.Fatalf("want one report of the input, by the recovery, and one turn.completed; events:\n%s", dump(evs))
	}
}

// Cancel of a turn another replica runs reaches it even when the peers'
// notice is lost: the request is recorded on the session's lease, and the
// replica holding it finds it on its heartbeat.
func TestReplicas_CancelWithoutPeersReachesTheTurn(t *testing.T) {
	h := newReplicaHarness(t)
	h.peers = &peerList{}
	h.peers.deaf.Store(true)
	a, b := h.replica("a"), h.replica("b")
	block := make(chan struct{})
	defer close(block)
	h.fake.Push(fakemodel.Block(block))
	s, _ := h.turnAtTheModel(a)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := b.eng.Cancel(ctx, s.ID)
	if err != nil {
		t.Fatalf("cancel on b: %v", err)
	}
	if got.Status != engine.StatusIdle {
		t.Fatalf("status after cancel = %s", got.Status)
	}
	_, evs := pollFor(t, a.eng, s.ID, "the cancelled turn", func(s engine.Session, evs []engine.Event) bool {
		return s.Status == engine.StatusIdle && count(evs, engine.EventTurnCompleted) == 1
	})
	for _, ev := range ofType(evs, engine.EventTurnCompleted) {
		if p, _ := ev.Decode(); p.(engine.TurnCompleted).Outcome != engine.OutcomeCancelled {
			t.Fatalf("turn outcome %q, want cancelled; events:\n%s", p.(engine.TurnCompleted).Outcome, dump(evs))
		}
	}
}
