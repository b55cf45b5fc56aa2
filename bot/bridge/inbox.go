package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"brain/internal/startstop"
	"brain/store"
	"brain/tools"
)

// maxBatch bounds one group commit.
const maxBatch = 256

// committers is how many group commits may be in flight at once: while
// one waits for its fsync, the next batch is written beside it
// (PostgreSQL runs both transactions side by side; SQLite's writer puts
// the second into its next shared transaction). Concurrent Records of one
// key are the store's to settle (RecordInbound's contract).
const committers = 2

// Inbox records inbound platform events durably before they are
// acknowledged. Concurrent Records are grouped: while a transaction
// commits, the next requests queue and go into the following one, so many
// webhooks share one fsync (group commit); up to committers transactions
// are in flight at once. Records wait until Start; after Stop they are
// refused.
//
// A batch is committed by one of the Records in it, in its caller's
// goroutine (the leader), not by a goroutine of the inbox: a request is
// handed from one goroutine to another once (its answer) instead of twice
// (to a committer and back), and on a machine the intake keeps busy every
// hand-off waits for the scheduler. A leader that is done hands the queue
// on to the oldest queued Record, which commits it.
type Inbox struct {
	store  store.Inbox
	now    func() time.Time
	onSave func() // wakes the inbox worker

	started chan struct{} // closed by Start: Records may commit
	closed  chan struct{} // closed once stopped: Record refuses

	mu      sync.Mutex
	queue   []*inboxRequest // waiting for a leader
	leaders int             // batches being committed, at most committers
	stopped bool
	// inflight counts the leaders, for Stop to wait for their batches.
	inflight sync.WaitGroup

	life startstop.Lifecycle
}

type inboxRequest struct {
	item store.Inbound
	// done is signalled once: the request's answer is in duplicate and
	// err, or, with lead set, the request is to lead the next batch.
	done      chan struct{}
	lead      bool
	duplicate bool
	err       error
}

// NewInbox builds an inbox over store; onSave (may be nil) is called after
// each commit. It starts nothing: Start does.
func NewInbox(store store.Inbox, now func() time.Time, onSave func()) *Inbox {
	return &Inbox{store: store, now: now, onSave: onSave, started: make(chan struct{}), closed: make(chan struct{})}
}

// Start begins committing Records. Safe to call twice.
func (b *Inbox) Start(ctx context.Context) error {
	return b.life.Start(ctx, func(context.Context) error {
		close(b.started)
		return nil
	})
}

// Stop stops taking records: Records still queued are refused, and it
// waits for the batches in flight (until ctx is done). Safe before Start,
// twice and concurrently.
func (b *Inbox) Stop(ctx context.Context) error {
	return b.life.Stop(ctx, func() {
		b.mu.Lock()
		b.stopped = true
		close(b.closed)
		for _, r := range b.queue {
			r.err = ErrInboxClosed
			r.done <- struct{}{}
		}
		b.queue = nil
		b.mu.Unlock()
		b.inflight.Wait()
	})
}

// Record stores one item, or reports that one of its dedupe keys was seen.
// When it returns nil the item is stored. Once queued, it waits for its
// batch's commit whatever ctx says (a commit is quick, and a Record that
// is to lead a batch must be there to do it); ctx bounds the wait for
// Start.
func (b *Inbox) Record(ctx context.Context, it store.Inbound) (bool, error) {
	select {
	case <-b.started:
	case <-ctx.Done():
		return false, ctx.Err()
	case <-b.closed:
		return false, ErrInboxClosed
	}
	req := &inboxRequest{item: it, done: make(chan struct{}, 1)}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return false, ErrInboxClosed
	}
	lead := b.leaders < committers
	if lead {
		b.leaders++
		b.inflight.Add(1)
	} else {
		b.queue = append(b.queue, req)
	}
	b.mu.Unlock()
	if !lead {
		<-req.done
		lead = req.lead // set before done was signalled
	}
	if lead {
		b.lead(req)
	}
	return req.duplicate, req.err
}

// lead commits self's request with the queue's oldest ones, answers them
// and hands the rest of the queue to a new leader.
func (b *Inbox) lead(self *inboxRequest) {
	defer b.inflight.Done()
	b.mu.Lock()
	n := min(len(b.queue), maxBatch-1)
	batch := append([]*inboxRequest{self}, b.queue[:n]...)
	b.queue = b.queue[n:]
	b.mu.Unlock()

	items := make([]store.Inbound, len(batch))
	for i, r := range batch {
		items[i] = r.item
	}
	dup, err := b.store.RecordInbound(context.Background(), b.now(), items)
	if err == nil && len(dup) != len(items) {
		err = fmt.Errorf("record inbound: %d answers for %d items", len(dup), len(items))
	}
	// The worker is woken before the callers hear back, so a Record
	// that returned has always woken it.
	if err == nil && b.onSave != nil {
		b.onSave()
	}

	b.mu.Lock()
	if len(b.queue) > 0 && !b.stopped {
		// The oldest queued request leads the next batch: it leaves the
		// queue now, so no other leader takes it into a batch.
		next := b.queue[0]
		b.queue = b.queue[1:]
		next.lead = true
		b.inflight.Add(1) // the next leader's, before this one's Done
		next.done <- struct{}{}
	} else {
		b.leaders--
	}
	b.mu.Unlock()
	for i, r := range batch {
		if err != nil {
			r.err = err
		} else {
			r.duplicate = dup[i]
		}
		if i > 0 {
			r.done <- struct{}{}
		}
	}
}

type inboxError string

func (e inboxError) Error() string { return string(e) }

// ErrInboxClosed is Record's answer once the inbox is stopped.
const ErrInboxClosed = inboxError("inbox is closed: brain is shutting down")

// Worker handles one source's recorded events, oldest first. An event
// the engine cannot take yet (its run queue is full) waits in the inbox, so
// load never turns into errors for the platform.
type Worker struct {
	Store  store.Inbox
	Source string // the inbox source worked, e.g. "slack"
	Now    func() time.Time
	Log    *slog.Logger
	// Wake is signalled when new items were recorded (the Inbox's onSave).
	Wake <-chan struct{}
	// Handle works one item; ErrRetryLater leaves it pending, any other
	// error is recorded as its outcome.
	Handle func(context.Context, store.Inbound) error
	// HandleBatch, when set, works a claimed batch instead of Handle: one
	// error per item, in order, each as Handle would return it (the first
	// ErrRetryLater leaves that item and the rest pending). A platform
	// uses it to start the batch's new sessions in one transaction.
	HandleBatch func(context.Context, []store.Inbound) []error
	// Owner names this worker's claims on items (the replica id), so
	// workers of several replicas never work one item; ClaimFor is how
	// long a claim lasts (after it, the item is worked again elsewhere:
	// its worker died). Defaults: "local", one minute.
	Owner    string
	ClaimFor time.Duration
}

// Run works the inbox until ctx is done.
func (w Worker) Run(ctx context.Context) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	pruned := time.Time{}
	owner, claimFor := w.Owner, w.ClaimFor
	if owner == "" {
		owner = "local"
	}
	if claimFor <= 0 {
		claimFor = time.Minute
	}
	for {
		now := w.Now()
		items, err := w.Store.ClaimInbound(ctx, w.Source, owner, now, now.Add(claimFor), 50)
		if err != nil && ctx.Err() == nil {
			w.Log.Error("read inbox", tools.LogErr, err)
		}
		backoff := false
		// Outcomes are written in one transaction per batch. A crash before
		// that re-works the batch: input is idempotent per platform message
		// and a repeated click meets a decided approval or a closed question.
		var done []store.Finished
		var errs []error
		if w.HandleBatch != nil && len(items) > 0 {
			if errs = w.HandleBatch(ctx, items); len(errs) != len(items) {
				w.Log.Error("inbox batch handler", tools.LogErr, fmt.Errorf("%d outcomes for %d items", len(errs), len(items)))
				errs = make([]error, len(items))
				for i := range errs {
					errs[i] = ErrRetryLater
				}
			}
		}
		for i, it := range items {
			var err error
			if errs != nil {
				err = errs[i]
			} else {
				err = w.Handle(ctx, it)
			}
			if errors.Is(err, ErrRetryLater) || ctx.Err() != nil {
				backoff = true
				break
			}
			f := store.Finished{ID: it.ID}
			if err != nil {
				f.Err = err.Error()
				w.Log.Error("inbound event failed", tools.LogThreadKey, it.ThreadKey, tools.LogErr, err)
			}
			done = append(done, f)
		}
		if err := w.Store.FinishInbound(context.WithoutCancel(ctx), w.Now(), done); err != nil {
			w.Log.Error("finish inbox items", tools.LogErr, err)
		}
		if now := w.Now(); now.Sub(pruned) > time.Hour {
			pruned = now
			if err := w.Store.PruneInbound(ctx, now.Add(-24*time.Hour)); err != nil && ctx.Err() == nil {
				w.Log.Error("prune inbox", tools.LogErr, err)
			}
		}
		switch {
		case len(items) == 50 && !backoff:
			continue
		case backoff:
			// The run queue is full: the event waits here, durable, and is
			// tried again shortly.
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			continue
		}
		select {
		case <-w.Wake:
			// Events come in bursts, each group commit waking the worker.
			// Waiting a moment lets one pass (one read, one commit of
			// outcomes) take the whole burst instead of a commit per
			// event, leaving the store's writer to the intake, whose acks
			// wait on it. Turns start at most this much later.
			select {
			case <-time.After(workerLinger):
			case <-ctx.Done():
				return
			}
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// workerLinger is how long the worker lets a burst of events gather after
// it is woken.
const workerLinger = 5 * time.Millisecond
