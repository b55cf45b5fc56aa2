package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of the replica settings.
const (
	defaultLeaseTTL     = 30 * time.Second
	defaultPollInterval = time.Second
)

// errLeaseLost cancels a turn whose session lease expired under it (this
// replica could not renew it in time): another replica may recover the
// session, so this one stops writing to it.
var errLeaseLost = errors.New("this replica lost the session's lease")

// newReplicaID is a replica id of its own (not from Config.NewID, whose
// sequence tests pin).
func newReplicaID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "rep_" + hex.EncodeToString(b)
}

// ReplicaID names this engine among the replicas sharing its store: the
// owner of its leases and inbox claims.
func (e *Engine) ReplicaID() string { return e.leases.owner }

// SharesStore reports whether other engines (replicas) may share this
// engine's store: work on one session can then run on one replica and be
// delivered from another.
func (e *Engine) SharesStore() bool { return !e.leases.exclusive }

// LeaseTTL is how long a lease of this engine lasts without a renewal: how
// long a dead replica's work waits before another takes it over.
func (e *Engine) LeaseTTL() time.Duration { return e.leases.ttl }

// Lease claims the lease on key for work done outside turns (a session's
// delivery to its platform: key names the platform and session), renewed
// by the engine's heartbeat until release is called. held is false when
// another replica, or another goroutine here, holds it.
func (e *Engine) Lease(ctx context.Context, key string) (release func(), held bool, err error) {
	k := deliveryLease(key)
	held, err = e.leases.acquire(ctx, k, nil)
	if err != nil || !held {
		return func() {}, false, err
	}
	return func() {
		if err := e.leases.release(ctx, k); err != nil {
			e.log.Warn("release lease; it expires on its own", "lease", k, logErr, err)
		}
	}, true, nil
}

// sessionHold is a runner's hold on its session's lease, which may last
// several turns: a lease the heartbeat finds lost cancels the turn running
// under it, and no later turn runs under it.
type sessionHold struct {
	mu     sync.Mutex
	lost   bool
	cancel context.CancelCauseFunc // the running turn's; nil between turns
}

// bind makes cancel (nil: none) the one a lost lease calls; false when the
// lease was lost already.
func (h *sessionHold) bind(cancel context.CancelCauseFunc) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return false
	}
	h.cancel = cancel
	return true
}

func (h *sessionHold) onLost() {
	h.mu.Lock()
	h.lost = true
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel(errLeaseLost)
	}
}

// holdSession claims the session's lease for a turn (nil: not held); a
// lease the heartbeat finds gone cancels the turn bound to it, first the
// one of cancel.
func (e *Engine) holdSession(ctx context.Context, id string, cancel context.CancelCauseFunc) *sessionHold {
	h := &sessionHold{cancel: cancel}
	held, err := e.leases.acquire(ctx, sessionLease(id), h.onLost)
	if err != nil {
		e.log.Error("claim session lease; the input waits for the next attempt", logSession, id, logErr, err)
	}
	if !held {
		return nil
	}
	return h
}

func (e *Engine) releaseSession(ctx context.Context, id string) {
	if err := e.leases.release(ctx, sessionLease(id)); err != nil {
		e.log.Warn("release session lease; it expires on its own", logSession, id, logErr, err)
	}
}

// recheck looks, after this replica's last turn of a session, for input
// another replica recorded while this one held the session (that replica
// could not take it): it runs here. Alone on the store nothing is missed.
// after is the input cursor the turn left (0: no turn started): any
// user.message past it is such input, found with one read of the log; a
// kick that finds the session unable to take it (interrupted meanwhile)
// ends in a recheck without a cursor, which reads the session too.
func (e *Engine) recheck(ctx context.Context, id string, after int64) {
	if e.leases.exclusive {
		return
	}
	if after > 0 {
		evs, err := e.store.Events(ctx, id, after, 0)
		if err != nil {
			e.log.Warn("recheck session for input", logSession, id, logErr, err)
			return
		}
		for _, ev := range evs {
			if ev.Type == EventUserMessage {
				e.kick(id)
				return
			}
		}
		return
	}
	s, err := e.store.Session(ctx, id)
	if err != nil {
		e.log.Warn("recheck session for input", logSession, id, logErr, err)
		return
	}
	if (s.Status != StatusIdle && s.Status != StatusAwaitingInput) || s.OpenQuestion() != nil {
		return
	}
	in, err := e.pendingInputs(ctx, s)
	if err != nil {
		e.log.Warn("recheck session for input", logSession, id, logErr, err)
		return
	}
	if len(in) > 0 {
		e.kick(id)
	}
}

// kickPending queues every session with input that no turn took: input
// another replica recorded and could not run, or left behind when it died.
// Input recorded within the last lease time is skipped: the live replica
// that recorded it runs it (it is queued there), or hands it by recheck to
// the replica holding the session, and a replica that died has lost its
// leases only after a lease time. Kicking it here too made every replica
// claim every queued session. Sessions queued or running here are skipped.
// (UpdatedAt is stamped by Config.Clock: the wall clock outside tests.)
func (e *Engine) kickPending(ctx context.Context) error {
	pending, err := e.store.Sessions(ctx, SessionFilter{
		Statuses:     []Status{StatusIdle, StatusAwaitingInput},
		PendingInput: true,
	})
	if err != nil {
		return err
	}
	settled := e.leases.now().Add(-e.leases.ttl)
	for _, s := range pending {
		if s.OpenQuestion() == nil && !s.UpdatedAt.After(settled) && !e.queuedHere(s.ID) {
			e.kick(s.ID)
		}
	}
	return nil
}

// queuedHere reports whether a goroutine here runs or waits to run the
// session's turns.
func (e *Engine) queuedHere(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runners[id] != nil
}

// watchReplicas is the loop of an engine that shares its store: the
// heartbeat of its leases, and the sweeps that take over what dead
// replicas left (running sessions and applies whose leases expired) and
// run input no replica took.
func (e *Engine) watchReplicas() {
	defer e.wg.Done()
	beat := time.NewTicker(max(e.leases.ttl/3, time.Millisecond))
	defer beat.Stop()
	poll := time.NewTicker(e.pollInterval)
	defer poll.Stop()
	lastBeat := time.Now()
	for {
		select {
		case <-beat.C:
			if err := e.leases.renew(e.base); err != nil {
				e.log.Error("renew leases", logErr, err)
				if time.Since(lastBeat) > e.leases.ttl {
					// The leases may have expired: stop what they guard
					// before another replica takes it over.
					e.leases.loseAll()
				}
				continue
			}
			lastBeat = time.Now()
		case <-poll.C:
			e.sweep(e.base)
		case <-e.stopCh:
			return
		}
	}
}

// sweep is one pass of the takeover sweeps.
func (e *Engine) sweep(ctx context.Context) {
	// Sessions that changed within a lease time have a live turn, or one
	// whose lease has not expired yet: claiming them would fail.
	if err := e.recover(ctx, e.leases.now().Add(-e.leases.ttl)); err != nil && ctx.Err() == nil {
		e.log.Error("recover sessions of other replicas", logErr, err)
	}
	if err := e.recoverApplies(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("recover applies of other replicas", logErr, err)
	}
	if err := e.kickPending(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("list sessions with queued input", logErr, err)
	}
}

// Peers reach the other replicas sharing the store.
type Peers interface {
	// StopTurn asks every replica to stop the session's running turn:
	// interrupted by new input when interrupt is set, else cancelled.
	// Each calls CancelLocalTurn; the request is not durable (a replica
	// that misses it keeps running the turn).
	StopTurn(ctx context.Context, sessionID string, interrupt bool) error
}

// CancelLocalTurn stops the session's turn if it runs here: what a
// replica does when another asks (see Peers). It does not wait.
func (e *Engine) CancelLocalTurn(sessionID string, interrupt bool) {
	cause := errCancelled
	if interrupt {
		cause = errInterrupted
	}
	e.cancelRunning(sessionID, cause)
}

// stopElsewhere asks the other replicas to stop the session's turn and
// waits until the session is no longer running, or ctx ends. Without
// peers it returns the session as it is.
func (e *Engine) stopElsewhere(ctx context.Context, id string) (Session, error) {
	if e.peers != nil {
		if err := e.peers.StopTurn(ctx, id, false); err != nil {
			return Session{}, fmt.Errorf("ask the replica running the turn to stop: %w", err)
		}
	}
	tick := time.NewTicker(e.pollInterval)
	defer tick.Stop()
	for {
		changed := e.hub.wait(id)
		s, err := e.store.Session(ctx, id)
		if err != nil || s.Status != StatusRunning || e.peers == nil {
			return s, err
		}
		// A turn that started here meanwhile is stopped too.
		e.cancelRunning(id, errCancelled)
		select {
		case <-changed:
		case <-tick.C:
		case <-ctx.Done():
			return Session{}, ctx.Err()
		}
	}
}

// interruptElsewhere asks the other replicas to interrupt the session's
// turn for new input; a failure is only logged (the input stays queued).
func (e *Engine) interruptElsewhere(ctx context.Context, id string) {
	if e.peers == nil {
		return
	}
	if err := e.peers.StopTurn(ctx, id, true); err != nil {
		e.log.Warn("ask the replica running the turn to interrupt it", logSession, id, logErr, err)
	}
}
