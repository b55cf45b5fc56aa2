package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"brain/engine/lease"
	"brain/tools"
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
func (e *Engine) ReplicaID() string { return e.leases.Owner }

// SharesStore reports whether other engines (replicas) may share this
// engine's store: work on one session can then run on one replica and be
// delivered from another.
func (e *Engine) SharesStore() bool { return !e.leases.Exclusive }

// HoldsSession reports whether this engine holds the session's lease: a
// turn of the session runs here, or is about to. A deliverer uses it to
// leave a session whose turn runs on another replica to that replica,
// which alone has the turn's streamed text.
func (e *Engine) HoldsSession(id string) bool { return e.leases.Holds(lease.SessionKey(id)) }

// LeaseTTL is how long a lease of this engine lasts without a renewal: how
// long a dead replica's work waits before another takes it over.
func (e *Engine) LeaseTTL() time.Duration { return e.leases.TTL }

// LeaseDelivery claims the lease on delivering the session to origin's
// platform, work done outside turns, renewed by the engine's heartbeat
// until release is called. held is false when another replica, or
// another goroutine here, holds it.
func (e *Engine) LeaseDelivery(ctx context.Context, origin Origin, sessionID string) (release func(), held bool, err error) {
	k := lease.DeliveryKey(string(origin), sessionID)
	held, err = e.leases.Acquire(ctx, k, nil)
	if err != nil || !held {
		return func() {}, false, err
	}
	return func() {
		if err := e.leases.Release(ctx, k); err != nil {
			e.log.Warn("release lease; it expires on its own", tools.LogLease, k, tools.LogErr, err)
		}
	}, true, nil
}

// holdSession claims the session's lease for a turn; stop cancels the
// turn if the heartbeat finds the lease gone or a stop requested on it,
// or if a commit is fenced. The context returned fences the turn's
// commits by the lease.
func (e *Engine) holdSession(ctx context.Context, id string, stop context.CancelCauseFunc) (context.Context, bool) {
	key := lease.SessionKey(id)
	held, err := e.outage.claimAfterOutage(ctx, func() (bool, error) {
		return e.leases.AcquireStoppable(ctx, key, func() { stop(errLeaseLost) }, func(r StopRequest) {
			if r == StopCancel {
				stop(errCancelled)
			} else if r == StopInterrupt {
				stop(errInterrupted)
			}
		})
	})
	if err != nil {
		e.log.Error("claim session lease; the input waits for the next attempt", tools.LogSession, id, tools.LogErr, err)
	}
	return e.withFence(ctx, key, func() { stop(errLeaseTaken) }), held
}

func (e *Engine) releaseSession(ctx context.Context, id string) {
	if err := e.leases.Release(ctx, lease.SessionKey(id)); err != nil {
		e.log.Warn("release session lease; it expires on its own", tools.LogSession, id, tools.LogErr, err)
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
	if e.leases.Exclusive {
		return
	}
	if after > 0 {
		evs, err := e.store.Events(ctx, id, after, 0)
		if err != nil {
			e.log.Warn("recheck session for input", tools.LogSession, id, tools.LogErr, err)
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
		e.log.Warn("recheck session for input", tools.LogSession, id, tools.LogErr, err)
		return
	}
	if (s.Status != StatusIdle && s.Status != StatusAwaitingInput) || s.OpenQuestion() != nil {
		return
	}
	in, err := e.pendingInputs(ctx, s)
	if err != nil {
		e.log.Warn("recheck session for input", tools.LogSession, id, tools.LogErr, err)
		return
	}
	// Input a rate limit holds back waits for its wake, not a kick now
	// (which would find nothing to run and recheck again).
	if in, _ := e.dueInputs(id, in); len(in) > 0 {
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
	settled := e.leases.Now().Add(-e.leases.TTL)
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
// run input no replica took. The heartbeat goes on while Stop drains the
// turns (their leases must outlive them); the sweeps stop with Stop's
// start, as a stopping engine takes nothing new.
func (e *Engine) watchReplicas(ctx context.Context) {
	beat := time.NewTicker(max(e.leases.TTL/3, time.Millisecond))
	defer beat.Stop()
	poll := time.NewTicker(e.pollInterval)
	defer poll.Stop()
	lastBeat := time.Now()
	for {
		select {
		case <-beat.C:
			if err := e.leases.Renew(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				e.log.Error("renew leases", tools.LogErr, err)
				if time.Since(lastBeat) > e.leases.TTL {
					// The leases may have expired: stop what they guard
					// before another replica takes it over.
					e.leases.LoseAll()
				}
				continue
			}
			lastBeat = time.Now()
		case <-poll.C:
			if !e.isStopping() {
				e.sweep(ctx)
			}
		case <-ctx.Done():
			return
		}
	}
}

// sweep is one pass of the takeover sweeps.
func (e *Engine) sweep(ctx context.Context) {
	// Sessions that changed within a lease time have a live turn, or one
	// whose lease has not expired yet: claiming them would fail.
	if err := e.recover(ctx, e.leases.Now().Add(-e.leases.TTL)); err != nil && ctx.Err() == nil {
		e.log.Error("recover sessions of other replicas", tools.LogErr, err)
	}
	if err := e.recoverApplies(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("recover applies of other replicas", tools.LogErr, err)
	}
	if err := e.kickPending(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("list sessions with queued input", tools.LogErr, err)
	}
}

// Peers reach the other replicas sharing the store.
type Peers interface {
	// StopTurn asks every replica to stop the session's running turn:
	// interrupted by new input when interrupt is set, else cancelled.
	// Each calls CancelLocalTurn. It is the fast path: the request is
	// also recorded on the session's lease (Leases.RequestStop), where
	// a replica that missed it finds it on its next heartbeat.
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
// waits until the session is no longer running, or ctx ends. The request
// is recorded on the session's lease, where its holder finds it on its
// heartbeat, and sent to the peers (when set), who act on it at once.
// Alone on its store the engine returns the session as it is.
func (e *Engine) stopElsewhere(ctx context.Context, id string) (Session, error) {
	if e.leases.Exclusive {
		return e.store.Session(ctx, id)
	}
	tick := time.NewTicker(e.pollInterval)
	defer tick.Stop()
	notified := false
	for {
		changed := e.hub.wait(id)
		s, err := e.store.Session(ctx, id)
		if err != nil || s.Status != StatusRunning {
			return s, err
		}
		// Asked again while it runs: a turn that started meanwhile (its
		// claim cleared the request) is stopped too, as one here is.
		if err := e.leases.Store.RequestStop(ctx, lease.SessionKey(id), StopCancel); err != nil {
			return Session{}, fmt.Errorf("ask the replica running the turn to stop: %w", err)
		}
		if !notified && e.peers != nil {
			notified = true
			if err := e.peers.StopTurn(ctx, id, false); err != nil {
				// The request on the lease still reaches it.
				e.log.Warn("notify the replica running the turn to stop; it finds the request on its heartbeat", tools.LogSession, id, tools.LogErr, err)
			}
		}
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
// turn for new input, on its lease and through the peers; a failure is
// only logged (the input stays queued).
func (e *Engine) interruptElsewhere(ctx context.Context, id string) {
	if e.leases.Exclusive {
		return
	}
	if err := e.leases.Store.RequestStop(ctx, lease.SessionKey(id), StopInterrupt); err != nil {
		e.log.Warn("ask the replica running the turn to interrupt it", tools.LogSession, id, tools.LogErr, err)
	}
	if e.peers == nil {
		return
	}
	if err := e.peers.StopTurn(ctx, id, true); err != nil {
		e.log.Warn("notify the replica running the turn to interrupt it", tools.LogSession, id, tools.LogErr, err)
	}
}
