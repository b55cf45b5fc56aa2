package governance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"brain/bot/audit"
	"brain/engine"
	"brain/internal/startstop"
	"brain/store"
	"brain/tools"
)

// spendKept is how long spend records are kept: no budget period reaches
// further back than the month before.
const spendKept = 62 * 24 * time.Hour

// LeaseKey is the lease the replicas' retention jobs take turns on.
const LeaseKey = "retention"

// Pruner is what Retention deletes from.
type Pruner interface {
	PruneAudit(ctx context.Context, before time.Time, limit int) (int, error)
	PruneSpend(ctx context.Context, before time.Time, limit int) (int, error)
	PruneRateBuckets(ctx context.Context, before time.Time, limit int) (int, error)
	PruneSessions(ctx context.Context, before time.Time, limit int) (store.SessionsPruned, error)
	Compact(ctx context.Context, pages int) (int, bool, error)
	AuditEntries(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error)
}

// FilePruner is a replica's store of shared files (bot/filestore).
type FilePruner interface {
	Prune(before time.Time) (int, error)
}

// Retention deletes expired records every Every, in batches of at most
// Batch per transaction, and records what it deleted in the audit trail.
// Turns never wait for it long: each batch is a short transaction of its
// own, sized to take about BatchTime (pace), the job rests three times as
// long as each took (longer while turns run: Duty, Turns), and the SQLite
// store ends a batch early when a turn queues for the writer. With Leases set
// one replica at a time prunes the database (the one holding LeaseKey for
// the interval); every replica prunes its own files.
type Retention struct {
	startstop.Lifecycle
	Store Pruner
	// Leases and Owner choose the replica that prunes the database; nil
	// Leases: this process alone.
	Leases engine.Leases
	Owner  string
	// Files is this replica's file store (nil: none kept).
	Files FilePruner
	// Sessions, Files and Audit are how long each is kept (0: forever).
	Sessions  time.Duration
	FilesKept time.Duration
	Audit     time.Duration
	Every     time.Duration
	Batch     int
	// BatchTime is how long a batch or a vacuum step should take (0:
	// DefaultBatchTime): the longest a turn should wait behind one.
	BatchTime time.Duration
	// Turns, when set, says how many turns run now (the engine's
	// Stats().RunningTurns). While any do, the job works in the gaps
	// between them: after each step it pauses as Duty says, resting half
	// of that and waiting the other half for a moment no turn runs, and
	// takes a quarter of the step the last ones measured whether one
	// came or not (so it always goes on).
	Turns func() int
	// Duty is the share of the time the job works while turns run (0:
	// DefaultDuty).
	Duty  float64
	Trail *audit.Recorder
	// Seal, when set, signs the chain's head (audit.SealHead): called
	// after a cut of the audit trail is recorded, so the cut is signed.
	Seal func(ctx context.Context) error
	Now  func() time.Time
	Log  *slog.Logger

	warnedCompact bool
	vacuum        *pace
	vacuumBusy    bool // turns ran around the last vacuum step
}

// DefaultBatchTime is Retention.BatchTime's default: about one commit of
// a turn on a loaded SQLite file, so a turn queued behind a batch waits
// no longer than behind another turn.
const DefaultBatchTime = 5 * time.Millisecond

// minBatch and the vacuum's page bounds: the smallest step still worth a
// transaction, the largest that stays short on an idle machine.
const (
	minBatch        = 20
	minCompactPages = 8
	maxCompactPages = 1024
)

func (r *Retention) newPace(lo, hi int) *pace {
	budget := r.BatchTime
	if budget <= 0 {
		budget = DefaultBatchTime
	}
	return newPace(budget, lo, hi, r.Duty)
}

// busy says whether turns run now.
func (r *Retention) busy() bool { return r.Turns != nil && r.Turns() > 0 }

// gapPoll is how often the job looks for a moment no turn runs while it
// waits for one.
const gapPoll = time.Millisecond

// settle rests after a step that took its share of d. After a step
// while turns ran (wasBusy) half of d is a rest and the other half a wait
// for a moment no turn runs, so under turns that never stop the job still
// works its duty; otherwise it rests all of d. It says whether turns
// still run; the next step is taken anyway (a quarter size while turns
// run or ran around the last), so the job makes progress under any load.
func (r *Retention) settle(ctx context.Context, d time.Duration, wasBusy bool) (busy bool) {
	if !wasBusy {
		r.rest(ctx, d)
		return r.busy()
	}
	r.rest(ctx, d/2)
	return r.waitGap(ctx, d-d/2)
}

// waitGap waits up to limit for a moment no turn runs and says whether
// turns still run.
func (r *Retention) waitGap(ctx context.Context, limit time.Duration) (busy bool) {
	if !r.busy() {
		return false
	}
	if limit <= 0 {
		return true
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(gapPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-deadline.C:
			return r.busy()
		case <-tick.C:
			if !r.busy() {
				return false
			}
		}
	}
}

// Start begins the job.
func (r *Retention) Start(ctx context.Context) error {
	return r.Lifecycle.Start(ctx, func(context.Context) error {
		r.Go(r.run)
		return nil
	})
}

// Stop ends it, waiting for a batch under way.
func (r *Retention) Stop(ctx context.Context) error { return r.Lifecycle.Stop(ctx, nil) }

func (r *Retention) run(ctx context.Context) {
	t := time.NewTicker(r.Every)
	defer t.Stop()
	for {
		if err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.Log.Error("retention", tools.LogErr, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RunOnce deletes everything expired now, batch by batch, and records the
// counts (when anything went) in the audit trail.
func (r *Retention) RunOnce(ctx context.Context) error {
	now := r.Now()
	r.vacuum = r.newPace(minCompactPages, maxCompactPages)
	deleted := map[string]int{}
	if r.Files != nil && r.FilesKept > 0 {
		n, err := r.Files.Prune(now.Add(-r.FilesKept))
		deleted["files"] = n
		if err != nil {
			return err
		}
	}
	if r.Leases != nil {
		// Held for the interval and not released: the next run of this
		// replica renews it, and another replica takes over only once
		// this one stopped running.
		ok, err := r.Leases.ClaimLease(ctx, LeaseKey, r.Owner, now, now.Add(r.Every+r.Every/2))
		if err != nil {
			return fmt.Errorf("retention lease: %w", err)
		}
		if !ok {
			return r.record(ctx, deleted, nil)
		}
	}
	if r.Sessions > 0 {
		if err := r.pruneSessions(ctx, now.Add(-r.Sessions)); err != nil {
			return err
		}
	}
	var cut *audit.Cut
	if r.Audit > 0 {
		n, err := r.drain(ctx, func(limit int) (int, error) { return r.Store.PruneAudit(ctx, now.Add(-r.Audit), limit) })
		deleted["audit_entries"] = n
		if err != nil {
			return err
		}
		if n > 0 {
			first, err := r.Store.AuditEntries(ctx, store.AuditQuery{Limit: 1})
			if err != nil {
				return err
			}
			if len(first) == 1 {
				cut = &audit.Cut{Seq: first[0].Seq - 1, Hash: first[0].Prev}
			}
		}
	}
	n, err := r.drain(ctx, func(limit int) (int, error) { return r.Store.PruneSpend(ctx, now.Add(-spendKept), limit) })
	deleted["spend_records"] = n
	if err != nil {
		return err
	}
	n, err = r.drain(ctx, func(limit int) (int, error) { return r.Store.PruneRateBuckets(ctx, now, limit) })
	deleted["rate_buckets"] = n
	if err != nil {
		return err
	}
	if err := r.compactAll(ctx); err != nil {
		return err
	}
	return r.record(ctx, deleted, cut)
}

// pruneSessions deletes the sessions idle since before, a batch of events
// at a time, and records what went in the audit trail by counts and the
// first and last session id (never what they held): the run's first
// batch at once, so the trail says the deleting began and under which
// rule before more goes, then the batches since the last entry every
// auditEvery and at the end. A crash between two entries leaves at most
// auditEvery of deletions unrecorded, each under a rule (idle_before) an
// entry already holds; an entry per batch made the smallest batches, while
// turns run, pay an fsynced audit write each.
func (r *Retention) pruneSessions(ctx context.Context, before time.Time) error {
	p := r.newPace(minBatch, r.Batch)
	busy := r.busy()
	var pending sessionsDeleted
	recorded, compacted := time.Time{}, time.Now()
	flush := func() error {
		if pending.batches == 0 {
			return nil
		}
		if err := r.Trail.Record(ctx, "brain", audit.ActionDeleted, "sessions", pending.detail(before)); err != nil {
			return err
		}
		pending, recorded = sessionsDeleted{}, time.Now()
		return nil
	}
	for ctx.Err() == nil {
		start := time.Now()
		b, err := r.Store.PruneSessions(ctx, before, p.next(busy))
		if err != nil {
			return errors.Join(err, flush())
		}
		// A batch may end short (a turn queued for the writer): only an
		// empty one says nothing expired is left.
		if b.Events == 0 && len(b.Sessions) == 0 {
			return flush()
		}
		took := time.Since(start) // before asking the engine anything
		wasBusy := r.busy()
		rest := p.took(b.Events+len(b.Sessions), took, wasBusy)
		pending.add(b)
		if recorded.IsZero() || time.Since(recorded) >= auditEvery {
			if err := flush(); err != nil {
				return err
			}
		}
		// Rest (pace), so the turns queued behind the batch run before
		// the next step; now and then give the space back.
		// A gap between turns says when to step, not how much: a turn
		// may start during the step all the same.
		busy = r.settle(ctx, rest, wasBusy) || wasBusy
		if time.Since(compacted) >= compactEvery {
			if err := r.compactAll(ctx); err != nil {
				return errors.Join(err, flush())
			}
			compacted = time.Now()
		}
	}
	return errors.Join(ctx.Err(), flush())
}

// auditEvery is how often the session deletions of a run are recorded
// while it goes on.
const auditEvery = 30 * time.Second

// sessionsDeleted adds up the batches not yet recorded.
type sessionsDeleted struct {
	batches, sessions, events int
	first, last               string
}

func (d *sessionsDeleted) add(b store.SessionsPruned) {
	d.batches++
	d.events += b.Events
	d.sessions += len(b.Sessions)
	if len(b.Sessions) > 0 {
		if d.first == "" {
			d.first = b.Sessions[0]
		}
		d.last = b.Sessions[len(b.Sessions)-1]
	}
}

func (d sessionsDeleted) detail(before time.Time) map[string]any {
	detail := map[string]any{"batches": d.batches, "sessions": d.sessions, "events": d.events, "idle_before": before.UTC().Format(time.RFC3339)}
	if d.first != "" {
		detail["first_session"], detail["last_session"] = d.first, d.last
	}
	return detail
}

// rest waits d or until ctx ends.
func (r *Retention) rest(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// compactAll gives every freed page back to the file system, step by
// step (compact), until none is left.
func (r *Retention) compactAll(ctx context.Context) error {
	for ctx.Err() == nil {
		freed, err := r.compact(ctx)
		if err != nil || freed == 0 {
			return err
		}
	}
	return ctx.Err()
}

// compactEvery is how often a run gives freed pages back while it
// deletes sessions (and once more at its end): a vacuum step after every
// batch doubled the steps, and their rests, while turns ran.
const compactEvery = time.Second

// compact gives freed pages back to the file system where the store must
// be asked, one step sized by time (r.vacuum) followed by a rest, and
// says how many it freed; it says once when the file cannot until it is
// vacuumed.
func (r *Retention) compact(ctx context.Context) (int, error) {
	if r.vacuum == nil {
		r.vacuum = r.newPace(minCompactPages, maxCompactPages)
	}
	start := time.Now()
	pages := r.vacuum.next(r.busy() || r.vacuumBusy)
	freed, ok, err := r.Store.Compact(ctx, pages)
	if err != nil {
		return 0, err
	}
	if !ok {
		if !r.warnedCompact && r.Log != nil {
			r.warnedCompact = true
			r.Log.Warn("retention: the database file reuses deleted space but cannot shrink until vacuumed once: stop brain and run sqlite3 brain.db 'PRAGMA auto_vacuum=INCREMENTAL; VACUUM;' (docs/governance.md)")
		}
		return 0, nil
	}
	if freed == 0 {
		return 0, nil // nothing was free: no news of the rate
	}
	took := time.Since(start)
	wasBusy := r.busy()
	r.vacuumBusy = r.settle(ctx, r.vacuum.took(freed, took, wasBusy), wasBusy) || wasBusy
	return freed, nil
}

// record appends the run's counts (when anything went) and the audit cut,
// then seals it.
func (r *Retention) record(ctx context.Context, deleted map[string]int, cut *audit.Cut) error {
	detail := map[string]any{}
	for k, n := range deleted {
		if n > 0 {
			detail[k] = n
		}
	}
	if len(detail) == 0 {
		return nil
	}
	if cut != nil {
		detail["audit_cut_seq"], detail["audit_cut_hash"] = cut.Seq, cut.Hash
	}
	if err := r.Trail.Record(ctx, "brain", audit.ActionDeleted, "retention", detail); err != nil {
		return err
	}
	if cut != nil && r.Seal != nil {
		return r.Seal(ctx)
	}
	return nil
}

// drain calls prune with paced limits, resting after each, until a batch
// comes back short.
func (r *Retention) drain(ctx context.Context, prune func(limit int) (int, error)) (int, error) {
	p := r.newPace(minBatch, r.Batch)
	total := 0
	busy := r.busy()
	for ctx.Err() == nil {
		start := time.Now()
		limit := p.next(busy)
		n, err := prune(limit)
		total += n
		if err != nil || n < limit {
			return total, err
		}
		took := time.Since(start)
		wasBusy := r.busy()
		busy = r.settle(ctx, p.took(n, took, wasBusy), wasBusy) || wasBusy
	}
	return total, ctx.Err()
}

var _ Pruner = store.Store(nil)
