package engine

import (
	"context"
	"time"
)

// Pace governs how fast new turns start (rate limits): the engine asks it
// once for each message that may start a turn, before recording it. A
// message over the limit is recorded all the same (it is acknowledged and
// never dropped) with the time it may run, and a notice saying so is
// recorded beside it; its turn starts once that time has come. Rate
// limits live outside the engine (bot/governance). Config.Pace nil starts
// every turn at once.
type Pace interface {
	// Reserve takes one turn for call from the limits that apply and
	// returns when it may run (at or before call.Now: at once) and, when
	// later, the notice to record for the person.
	Reserve(ctx context.Context, call PaceCall) (runAt time.Time, notice string, err error)
}

// PaceCall names a message that may start a turn.
type PaceCall struct {
	Session Session
	// Author is who wrote the message (Input.Author; empty for messages
	// nobody signed).
	Author string
	Now    time.Time
}

// CounterDeferred is the Stats counter of messages a rate limit deferred.
const CounterDeferred = "inputs_deferred"

// pace reserves a turn for in and, when it must wait, sets in.RunAt and
// returns the notice to record after it.
func (e *Engine) pace(ctx context.Context, cur Session, in *Input) (notice Payload, err error) {
	if e.pacer == nil || in.Answer != nil || in.RetryOf != "" || cur.OpenQuestion() != nil {
		return nil, nil // answers and retries continue what was already paced
	}
	now := e.now()
	runAt, text, err := e.pacer.Reserve(ctx, PaceCall{Session: cur, Author: in.Author, Now: now})
	if err != nil || !runAt.After(now) {
		return nil, err
	}
	in.RunAt = runAt.UTC()
	return AgentMessage{Text: text}, nil
}

// dueInputs is the package function below for the session id, arranging
// for the runner to wake when the first held-back input is due. Without a
// Pace every input is due.
func (e *Engine) dueInputs(id string, inputs []Event) ([]Event, time.Time) {
	if e.pacer == nil {
		return inputs, time.Time{}
	}
	due, wait := dueInputs(inputs, e.now())
	if !wait.IsZero() {
		e.deferUntil(id, wait)
	}
	return due, wait
}

// dueInputs is the leading run of inputs whose time has come, and the
// time of the first that must wait (zero: none waits). Inputs keep their
// order: one that may run waits behind an earlier one that may not.
func dueInputs(inputs []Event, now time.Time) ([]Event, time.Time) {
	for i, ev := range inputs {
		p, err := ev.Decode()
		if err != nil {
			continue
		}
		if in, ok := p.(Input); ok && in.RunAt.After(now) {
			return inputs[:i], in.RunAt
		}
	}
	return inputs, time.Time{}
}

// deferUntil wakes the session's runner at (by Config.Clock) to run input
// a rate limit held back. The wake is in memory: after a restart Start
// finds the input queued and defers it again.
func (e *Engine) deferUntil(id string, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if cur, ok := e.deferred[id]; !ok || at.Before(cur) {
		e.deferred[id] = at
	}
}

// wakeDeferred kicks sessions whose deferred input is due, checking every
// poll interval.
func (e *Engine) wakeDeferred(ctx context.Context) {
	t := time.NewTicker(e.pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := e.now()
		var due []string
		e.mu.Lock()
		for id, at := range e.deferred {
			if !at.After(now) {
				due = append(due, id)
				delete(e.deferred, id)
			}
		}
		e.mu.Unlock()
		for _, id := range due {
			e.kick(id)
		}
	}
}
