package governance

import (
	"context"
	"log/slog"
	"time"

	"brain/bot/audit"
	"brain/internal/startstop"
	"brain/store"
	"brain/tools"
)

// spendKept is how long spend records are kept: no budget period reaches
// further back than the month before.
const spendKept = 62 * 24 * time.Hour

// Pruner is what Retention deletes from.
type Pruner interface {
	PruneAudit(ctx context.Context, before time.Time, limit int) (int, error)
	PruneSpend(ctx context.Context, before time.Time, limit int) (int, error)
}

// Retention deletes expired records every Every, Batch per transaction,
// and records what it deleted in the audit trail. Turns never wait for
// it: each batch is a short transaction of its own.
type Retention struct {
	startstop.Lifecycle
	Store Pruner
	// Audit is how long audit entries are kept (0: forever).
	Audit time.Duration
	Every time.Duration
	Batch int
	Trail *audit.Recorder
	Now   func() time.Time
	Log   *slog.Logger
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
	deleted := map[string]int{}
	if r.Audit > 0 {
		n, err := drain(ctx, r.Batch, func(limit int) (int, error) { return r.Store.PruneAudit(ctx, now.Add(-r.Audit), limit) })
		deleted["audit_entries"] = n
		if err != nil {
			return err
		}
	}
	n, err := drain(ctx, r.Batch, func(limit int) (int, error) { return r.Store.PruneSpend(ctx, now.Add(-spendKept), limit) })
	deleted["spend_records"] = n
	if err != nil {
		return err
	}
	if deleted["audit_entries"] == 0 && deleted["spend_records"] == 0 {
		return nil
	}
	return r.Trail.Record(ctx, "brain", audit.ActionDeleted, "retention", deleted)
}

// drain calls prune with limit until a batch comes back short.
func drain(ctx context.Context, limit int, prune func(limit int) (int, error)) (int, error) {
	total := 0
	for ctx.Err() == nil {
		n, err := prune(limit)
		total += n
		if err != nil || n < limit {
			return total, err
		}
	}
	return total, ctx.Err()
}

var _ Pruner = store.Store(nil)
