package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Fence makes a commit conditional on a lease: the store writes it only
// if, inside the commit's own transaction, the lease on Key exists and is
// held by Owner. A replica that lost a lease (its heartbeat stalled past
// the lease time: a long pause, a partition) may still have a commit in
// flight after another replica claimed the lease and took the work over;
// the fence refuses that commit, so the work is never written by two
// replicas. Expiry is not checked: a lease nobody has claimed since is
// still its owner's to write under, since a takeover always claims first.
type Fence struct {
	Key   string
	Owner string
}

// ErrFenced is what a store returns (wrapped with what was refused) for a
// commit whose Fence no longer holds: nothing was written.
var ErrFenced = errors.New("fenced: the lease is no longer held by this owner")

// Refused is the error a store returns for a commit f refused; holder is
// the lease's owner ("" when nobody holds it).
func (f Fence) Refused(op, holder string) error {
	if holder == "" {
		return fmt.Errorf("%s: lease %s is not held by %s: %w", op, f.Key, f.Owner, ErrFenced)
	}
	return fmt.Errorf("%s: lease %s is held by %s, not %s: %w", op, f.Key, holder, f.Owner, ErrFenced)
}

// errLeaseTaken cancels a turn whose commit was fenced: another replica
// claimed the session's lease, and so may have recovered it already.
var errLeaseTaken = fmt.Errorf("%w to another replica", errLeaseLost)

// turnFence is the fence of a turn's commits, carried by its context from
// the session lease's claim to every commit the turn makes; lost stops the
// turn when one is refused.
type turnFence struct {
	Fence
	lost func()
}

type fenceKey struct{}

// fence is the fence of a commit under this engine's lease on key; nil
// when the engine is alone on its store (its leases are in memory, with
// no row for a store to check).
func (e *Engine) fence(key string) *Fence {
	if e.leases.exclusive {
		return nil
	}
	return &Fence{Key: key, Owner: e.leases.owner}
}

// withFence fences the commits made with ctx by the engine's lease on key
// (when it shares its store); lost (may be nil) is called when one is
// refused.
func (e *Engine) withFence(ctx context.Context, key string, lost func()) context.Context {
	f := e.fence(key)
	if f == nil {
		return ctx
	}
	if lost == nil {
		lost = func() {}
	}
	return context.WithValue(ctx, fenceKey{}, &turnFence{Fence: *f, lost: lost})
}

// fenceCommit sets the fence ctx carries on c, unless c has its own.
func fenceCommit(ctx context.Context, c *Commit) *turnFence {
	f, _ := ctx.Value(fenceKey{}).(*turnFence)
	if f != nil && c.Fence == nil {
		c.Fence = &f.Fence
	}
	return f
}

// fenced is told of a commit's error: a refused fence stops the work that
// held the lease, at once, before it writes or does anything more.
func fenced(f *turnFence, err error) {
	if f != nil && errors.Is(err, ErrFenced) {
		f.lost()
	}
}

// logLeaseLost says why a turn stopped without recording how it ended
// (cause is the turn's, err what its last write returned): the replica
// that took the session over records that.
func logLeaseLost(log *slog.Logger, cause, err error) {
	if errors.Is(cause, errLeaseTaken) || errors.Is(err, ErrFenced) {
		if err != nil {
			log = log.With(logErr, err)
		}
		log.Error("turn stopped: this replica lost the session's lease to another replica (its commit was fenced); nothing more is written here")
		return
	}
	log.Error("turn stopped: this replica lost the session's lease (it could not renew it in time)")
}

// takenOver is what a person's decision or retry answers when its commit
// was fenced: this replica stalled past the apply lease and another one
// took the approval over, so the request conflicts (409) rather than
// failing inside.
func takenOver(approvalID string, err error) error {
	if errors.Is(err, ErrFenced) {
		return Errorf(CodeConflict, "approval %s was taken over by another replica while this request held it; look at it again", approvalID)
	}
	return err
}
