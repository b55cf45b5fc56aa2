package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"brain/engine/lease"
	"brain/engine/policy"
	"brain/internal/startstop"
	"brain/tools"
)

// Config wires an Engine.
type Config struct {
	Store  Store
	Agents []*Agent
	Logger *slog.Logger
	// Clock and NewID are injected so tests are deterministic; both required.
	Clock func() time.Time
	NewID func(prefix string) string

	// MaxRunningTurns bounds turns running at once (default 16).
	MaxRunningTurns int
	// MaxQueuedTurns bounds turns waiting for a slot (default 256); input
	// beyond it is refused with ErrOverloaded before anything is stored.
	MaxQueuedTurns int
	// MaxToolIterations is the default cap on tool rounds per turn (5).
	MaxToolIterations int
	// MaxOutputBytes caps one tool result's JSON (default 64 KiB).
	MaxOutputBytes int
	// ToolTimeout bounds one tool call unless the tool sets its own (60s).
	ToolTimeout time.Duration
	// ElicitationTimeout bounds a call held open for the person's input (10m).
	ElicitationTimeout time.Duration
	// ApprovalTTL is how long an approval stays pending (168h).
	ApprovalTTL time.Duration
	// ExpirySweep is how often pending approvals are checked for expiry (1m).
	ExpirySweep time.Duration
	// Policies decide, per approval tool call, whether a person is asked
	// and how many (approvals.policies); nil asks one person every time.
	Policies *policy.PolicySet
	// RemindBefore, when positive, records a reminder this long before a
	// pending approval expires.
	RemindBefore time.Duration
	// Scrubber redacts configured secrets from every text the engine
	// records or logs that came from outside: model output and provider
	// errors, tool results, errors and progress, previews and applies. Nil
	// redacts nothing.
	Scrubber *tools.Scrubber
	// Observer, when set, is told about turns and tool calls (metrics, logs).
	Observer Observer
	// Spend, when set, is asked before each model call and told what it
	// used (budgets); nil spends without limit.
	Spend Spend
	// Pace, when set, is asked before a message that may start a turn is
	// recorded (rate limits); nil starts every turn at once.
	Pace Pace
	// Files loads the files user messages refer to; nil leaves them out
	// with a note to the model.
	Files Files
	// FileBudget caps the bytes of file content in one model request: the
	// newest files are sent, older ones beyond it are named only (0: no
	// cap).
	FileBudget int64
	// Groups resolves approver entries naming groups; nil grants nothing
	// to group entries.
	Groups Groups
	// People links identities on each surface to one person (approvers
	// entries "person:ID", one vote per person, forbid_self across
	// surfaces); nil links nobody.
	People People
	// MaxParallelTools bounds the independent tool calls of one model
	// round that run at once (default 4; 1 runs every call in turn).
	MaxParallelTools int

	// Leases, when set, are shared with other engines (replicas) on the
	// same store: turns, applies and deliveries are leased there, renewed
	// by a heartbeat, and what a dead replica leaves is taken over. Nil
	// means this engine is alone on its store (SQLite under its file
	// lock): leases are kept in memory, and any left in the store by an
	// earlier process count as dead.
	Leases Leases
	// Replica names this engine among its replicas (default a new id).
	Replica string
	// LeaseTTL is how long a lease lasts unrenewed (default 30s).
	LeaseTTL time.Duration
	// OutageGrace is how long a turn waits out an unreachable store,
	// retrying with backoff, before it fails (default DefaultOutageGrace;
	// negative: no waiting). See outage.go.
	OutageGrace time.Duration
	// PollInterval is how often a replica sweeps the store for work
	// other replicas left (default 1s).
	PollInterval time.Duration
	// Peers, when set, reach the other replicas: cancel and interrupt ask
	// them to stop a turn that runs elsewhere.
	Peers Peers
}

// Engine runs sessions: it records input, schedules turns on a bounded pool
// of workers, runs the tool loop and writes every step to the Store.
type Engine struct {
	store Store
	// outage is the store waiting out outages (e.store is it too); lease
	// claims wait through it.
	outage outageStore
	log    *slog.Logger
	now    func() time.Time
	newID  func(prefix string) string
	agents map[string]*Agent

	maxQueued      int
	maxIterations  int
	maxOutputBytes int
	toolTimeout    time.Duration
	elicitTimeout  time.Duration
	approvalTTL    time.Duration
	expirySweep    time.Duration
	policies       *policy.PolicySet
	remindBefore   time.Duration
	askTool        *tools.Tool
	scrub          *tools.Scrubber
	observer       Observer
	spend          Spend
	pacer          Pace
	files          Files
	maxAttachBytes int64
	groups         Groups
	people         People
	maxParallel    int

	slots chan struct{} // one token per running turn
	hub   hub
	// deltas carries streamed text to its watchers, never to the store.
	deltas *Broker[Delta]

	leases       *lease.Holder
	pollInterval time.Duration
	peers        Peers

	mu      sync.Mutex
	causes  map[string]bool // tool failure causes already logged
	sizes   sizer           // the context estimate's correction, per agent
	runners map[string]*runner
	waiting int // runners with input not yet taken into a turn
	// deferred holds when each session's rate-limited input may run.
	deferred map[string]time.Time
	stopping bool
	stopCh   chan struct{} // closed when Stop begins: no new turns
	// life runs the background loops (approval sweeps, lease heartbeat and
	// takeover sweeps) from Start to the end of Stop; turns and applies
	// are drained by Stop itself first, as they may finish gracefully.
	life     startstop.Lifecycle
	base     context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	counters counters

	// Applies of approved writes run outside turns; Stop waits for them and
	// cancels them at its deadline (they become unconfirmed).
	applies     sync.WaitGroup
	applyCtx    context.Context
	applyCancel context.CancelFunc
}

// runner is the in-memory state of a session that has work.
type runner struct {
	pending bool // input recorded but not yet taken into a turn
	active  bool // a goroutine owns this session
	// cancelTurn and turnDone are set while a turn runs.
	cancelTurn context.CancelCauseFunc
	turnDone   chan struct{}
	// seen is the session as the newest commit here that queued input
	// returned it (nil: none since the last turn started): the next
	// turn's start uses it instead of reading the session.
	seen *Session
}

// Causes of a turn's cancellation.
var (
	errInterrupted = errors.New("interrupted by new input")
	errCancelled   = errors.New("cancelled")
	errShutdown    = errors.New("brain is shutting down")
)

// New checks the configuration and builds an Engine. Call Start before use.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil || cfg.Clock == nil || cfg.NewID == nil {
		return nil, errors.New("engine: Store, Clock and NewID are required")
	}
	e := &Engine{
		hub:            newHub(),
		deltas:         newDeltas(),
		store:          cfg.Store,
		log:            cfg.Logger,
		now:            cfg.Clock,
		newID:          cfg.NewID,
		agents:         map[string]*Agent{},
		maxQueued:      orDefault(cfg.MaxQueuedTurns, DefaultMaxQueuedTurns),
		maxIterations:  orDefault(cfg.MaxToolIterations, DefaultMaxToolIterations),
		maxOutputBytes: orDefault(cfg.MaxOutputBytes, DefaultMaxOutputBytes),
		toolTimeout:    cfg.ToolTimeout,
		elicitTimeout:  cfg.ElicitationTimeout,
		approvalTTL:    cfg.ApprovalTTL,
		expirySweep:    cfg.ExpirySweep,
		policies:       cfg.Policies,
		remindBefore:   cfg.RemindBefore,
		askTool:        newAskTool(),
		scrub:          cfg.Scrubber,
		observer:       cfg.Observer,
		spend:          cfg.Spend,
		pacer:          cfg.Pace,
		deferred:       map[string]time.Time{},
		files:          cfg.Files,
		maxAttachBytes: cfg.FileBudget,
		groups:         cfg.Groups,
		people:         cfg.People,
		maxParallel:    orDefault(cfg.MaxParallelTools, DefaultMaxParallelTools),
		slots:          make(chan struct{}, orDefault(cfg.MaxRunningTurns, DefaultMaxRunningTurns)),
		runners:        map[string]*runner{},
		stopCh:         make(chan struct{}),
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.outage = outageStore{Store: e.store, grace: outageGrace(cfg.OutageGrace), log: e.log}
	e.store = e.outage
	if e.toolTimeout <= 0 {
		e.toolTimeout = DefaultToolTimeout
	}
	if e.approvalTTL <= 0 {
		e.approvalTTL = DefaultApprovalTTL
	}
	if e.expirySweep <= 0 {
		e.expirySweep = DefaultExpirySweep
	}
	for _, a := range cfg.Agents {
		if err := a.check(); err != nil {
			return nil, err
		}
		if _, dup := e.agents[a.Name]; dup {
			return nil, fmt.Errorf("agent %q: defined twice", a.Name)
		}
		e.agents[a.Name] = a
	}
	// Lease times are wall-clock times, compared across replicas; the
	// injected clock stamps records only.
	e.leases = &lease.Holder{Store: cfg.Leases, Owner: cfg.Replica, TTL: cfg.LeaseTTL, Now: time.Now}
	if e.leases.Store == nil {
		e.leases.Store, e.leases.Exclusive = &lease.Memory{}, true
	}
	if e.leases.Owner == "" {
		e.leases.Owner = newReplicaID()
	}
	if e.leases.TTL <= 0 {
		e.leases.TTL = DefaultLeaseTTL
	}
	e.peers = cfg.Peers
	e.pollInterval = cfg.PollInterval
	if e.pollInterval <= 0 {
		e.pollInterval = DefaultPollInterval
	}
	e.base, e.cancel = context.WithCancel(context.Background())
	e.applyCtx, e.applyCancel = context.WithCancel(context.Background())
	return e, nil
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Start recovers sessions a crash left running and schedules queued input.
// It is safe to call twice and concurrently with Stop; after Stop it does
// nothing. When recovery fails, a later Start tries again.
func (e *Engine) Start(ctx context.Context) error {
	return e.life.Start(ctx, e.start)
}

func (e *Engine) start(ctx context.Context) error {
	if e.isStopping() {
		return nil // a stopped engine does not start again
	}
	if err := e.recover(ctx, time.Time{}); err != nil {
		return fmt.Errorf("recover sessions: %w", err)
	}
	if err := e.recoverApplies(ctx); err != nil {
		return fmt.Errorf("recover approvals: %w", err)
	}
	if err := e.ExpireApprovals(ctx); err != nil {
		return err
	}
	if e.isStopping() { // Stop came during recovery: nothing more to start
		return nil
	}
	e.life.Go(e.sweepApprovals)
	if e.pacer != nil {
		e.life.Go(e.wakeDeferred)
	}
	if !e.leases.Exclusive {
		e.life.Go(e.watchReplicas)
	}
	pending, err := e.store.Sessions(ctx, SessionFilter{
		Statuses:     []Status{StatusIdle, StatusAwaitingInput},
		PendingInput: true,
	})
	if err != nil {
		return fmt.Errorf("list queued sessions: %w", err)
	}
	for _, s := range pending {
		e.kick(s.ID)
	}
	return nil
}

// Stop stops taking input, lets running turns finish until ctx is done, then
// cancels what is left; cancelled turns leave their sessions interrupted,
// with their input and the input queued behind them reported not run
// (resume with retry runs it). Other queued input stays recorded and runs
// after the next Start. Safe to call twice.
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	if !e.stopping {
		e.stopping = true
		close(e.stopCh)
	}
	e.mu.Unlock()

	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		e.mu.Lock()
		for _, r := range e.runners {
			if r.cancelTurn != nil {
				r.cancelTurn(errShutdown)
			}
		}
		e.mu.Unlock()
		<-done
	}
	applied := make(chan struct{})
	go func() { e.applies.Wait(); close(applied) }()
	select {
	case <-applied:
	case <-ctx.Done():
		e.applyCancel() // the applies record themselves unconfirmed
		<-applied
	}
	e.applyCancel()
	e.cancel()
	// The background loops ran until now: the lease heartbeat keeps the
	// leases of draining turns alive.
	// They end at once, their context cancelled: wait for them whatever
	// ctx says, so nothing of the engine outlives Stop.
	return e.life.Stop(context.WithoutCancel(ctx), nil)
}

// kick marks a session as having queued input and makes sure a goroutine
// will take it.
func (e *Engine) kick(id string) { e.kickSeen(id, nil) }

// kickSeen is kick with the session as the commit that queued the input
// returned it (nil: unknown).
func (e *Engine) kickSeen(id string, seen *Session) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return // the input is durable; the next Start picks it up
	}
	r := e.runners[id]
	if r == nil {
		r = &runner{}
		e.runners[id] = r
	}
	if seen != nil && (r.seen == nil || seen.LastSeq > r.seen.LastSeq) {
		r.seen = seen
	}
	if !r.pending {
		r.pending = true
		e.waiting++
	}
	if !r.active {
		r.active = true
		e.wg.Add(1)
		go e.work(id, r)
	}
}

// admit refuses input that would queue a new turn beyond the limit.
func (e *Engine) admit(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return Errorf(CodeOverloaded, "brain is shutting down; retry shortly")
	}
	if r := e.runners[id]; r != nil && r.pending {
		return nil // joins a turn that is already queued
	}
	if e.waiting >= e.maxQueued {
		return Errorf(CodeOverloaded, "too many turns are queued (%d); retry shortly", e.maxQueued)
	}
	return nil
}

// work runs turns for one session until it has no queued input.
func (e *Engine) work(id string, r *runner) {
	defer e.wg.Done()
	for {
		select {
		case e.slots <- struct{}{}:
		case <-e.stopCh:
			e.retire(id, r)
			return
		}
		e.mu.Lock()
		r.pending = false
		e.waiting--
		seen := r.seen
		r.seen = nil
		e.mu.Unlock()

		// The session's lease: another replica holding it runs the input.
		// Only a held session has a turn here that cancel can stop. Each
		// turn claims it anew: a claim clears stop requests left on the
		// lease for the turn before.
		ctx, cancel := context.WithCancelCause(e.base)
		ctx, ran := e.holdSession(ctx, id, cancel)
		var cursor int64
		if ran {
			e.mu.Lock()
			r.cancelTurn, r.turnDone = cancel, make(chan struct{})
			done := r.turnDone
			e.mu.Unlock()
			cursor = e.runTurn(ctx, id, seen)
			e.releaseSession(ctx, id)
			e.mu.Lock()
			r.cancelTurn, r.turnDone = nil, nil
			close(done)
			e.mu.Unlock()
		}
		cancel(nil)
		<-e.slots

		e.mu.Lock()
		again := r.pending && !e.stopping
		if !again {
			// Under the same lock as the check, so a kick in between
			// starts a new goroutine instead of being dropped here.
			e.retireLocked(id, r)
		}
		e.mu.Unlock()
		if !again {
			if ran {
				e.recheck(context.WithoutCancel(ctx), id, cursor)
			}
			return
		}
	}
}

// retire forgets a runner whose goroutine ends.
func (e *Engine) retire(id string, r *runner) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.retireLocked(id, r)
}

func (e *Engine) retireLocked(id string, r *runner) {
	r.active = false
	if r.pending {
		// Only when stopping: the input is durable and the next Start runs it.
		r.pending = false
		e.waiting--
	}
	if e.runners[id] == r {
		delete(e.runners, id)
	}
}

// cancelRunning cancels the session's running turn with cause and returns
// a channel closed when that turn has finished (nil when none runs).
func (e *Engine) cancelRunning(id string, cause error) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.runners[id]
	if r == nil || r.cancelTurn == nil {
		return nil
	}
	r.cancelTurn(cause)
	return r.turnDone
}
