package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"brain/engine/lease"
	"brain/tools"
)

// recover repairs sessions that a crash left running: each gets an error
// result for every tool call that has none (its outcome is unknown), a
// session.error for the turn's input and its queued input, and status
// interrupted, so `resume` can continue it (and resume with retry run the
// input again). Sessions updated after changedBefore (zero: none) are
// skipped.
func (e *Engine) recover(ctx context.Context, changedBefore time.Time) error {
	running, err := e.store.Sessions(ctx, SessionFilter{Statuses: []Status{StatusRunning}})
	if err != nil {
		return err
	}
	for _, s := range running {
		if !changedBefore.IsZero() && s.UpdatedAt.After(changedBefore) {
			continue
		}
		// A running session whose lease this engine can claim has no live
		// turn anywhere: its replica (or this process, before a restart)
		// died. One whose turn is alive is skipped.
		key := lease.SessionKey(s.ID)
		held, err := e.leases.Acquire(ctx, key, nil)
		if err != nil {
			return err
		}
		if !held {
			continue
		}
		// Written under the lease, fenced by it: a replica that claimed
		// it meanwhile (this one paused past the lease time) wins.
		err = e.recoverHeld(e.withFence(ctx, key, nil), s.ID)
		if rerr := e.leases.Release(ctx, key); rerr != nil {
			e.log.Warn("release session lease; it expires on its own", tools.LogSession, s.ID, tools.LogErr, rerr)
		}
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		// The turn may have ended before the claim: input another replica
		// recorded while this one held the lease waits for a turn.
		e.recheck(ctx, s.ID, 0)
	}
	return nil
}

// recoverHeld recovers the session, read again under its lease: the turn
// listed as running may have ended (and released the lease) since.
func (e *Engine) recoverHeld(ctx context.Context, id string) error {
	s, err := e.store.Session(ctx, id)
	if err != nil || s.Status != StatusRunning {
		return err
	}
	if err := e.recoverSession(ctx, s); err != nil {
		return err
	}
	e.log.Warn("session interrupted by a crash or kill; resume it to continue", tools.LogSession, s.ID)
	return nil
}

func (e *Engine) recoverSession(ctx context.Context, s Session) error {
	evs, err := e.store.Events(ctx, s.ID, s.Checkpoint, 0)
	if err != nil {
		return err
	}
	var turnID string
	var inputs []Event
	open := map[string]ToolCall{}
	var order []string
	var unreadable []error
	for _, ev := range evs {
		if ev.Type == EventUserMessage {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			unreadable = append(unreadable, err)
			continue
		}
		switch p := p.(type) {
		case TurnStarted:
			turnID = ev.TurnID
			// Only the ids are needed; an input queued during the previous
			// turn was logged before the checkpoint, so not read here.
			inputs = inputs[:0]
			for _, id := range p.InputIDs {
				inputs = append(inputs, Event{ID: id})
			}
		case ToolCall:
			open[p.ID] = p
			order = append(order, p.ID)
		case ToolCallResult:
			delete(open, p.CallID)
		}
	}
	if err := errors.Join(unreadable...); err != nil {
		// Repair what can be read; the session still ends interrupted.
		e.log.Warn("unreadable events skipped while recovering", tools.LogSession, s.ID, tools.LogErr, err)
	}
	t := &turn{id: turnID, session: s}
	msg := "brain stopped while this turn was running; " + resumeHint
	q := s.OpenQuestion()
	held := q != nil && q.Call != nil && q.Call.Held
	for _, id := range order {
		c, ok := open[id]
		if !ok {
			continue
		}
		out := unknown("brain stopped while %q was running; its outcome is unknown", c.Name)
		if held && q.CallID == id {
			// The call waited for the person (held.go): say so where
			// they were asked, naming the tool.
			out.Text, msg = heldLost(q)
		}
		if err := e.recordResult(ctx, t, c, out); err != nil {
			return err
		}
	}
	return e.stopBroken(ctx, s.ID, turnID, inputs, StatusInterrupted, CodeInterrupted, msg)
}
