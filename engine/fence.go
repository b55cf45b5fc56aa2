package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"brain/tools"
)

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
	if e.leases.Exclusive {
		return nil
	}
	return &Fence{Key: key, Owner: e.leases.Owner}
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
			log = log.With(tools.LogErr, err)
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
