package engine

import (
	"context"
	"fmt"
)

// Start is one session to start with its first input (StartSessions).
type Start struct {
	Session NewSession
	Input   Input
}

// Started is the outcome of one Start: the session, the recorded input
// and whether the session was created; or Err, for this start only.
type Started struct {
	Session Session
	Event   Event
	Created bool
	Err     error
}

// SessionStart is a session for the store to create with its first
// commits (SessionStarter).
type SessionStart struct {
	Session        Session
	IdempotencyKey string
	// Commits are applied in order to the session once created (each as
	// Store.Commit would); none when the session existed already.
	Commits []Commit
}

// SessionStarted is the outcome of one SessionStart: the session created
// with its commits' results, or the existing session (Created false, no
// commit applied), or Err, which undid this start and no other.
type SessionStarted struct {
	Session Session
	Created bool
	Results []CommitResult
	Err     error
}

// SessionStarter is an optional Store capability: it creates many
// sessions with their first commits in one transaction (one fsync for a
// batch of Slack mentions instead of two per mention). A store without it
// starts them one at a time.
type SessionStarter interface {
	StartSessions(ctx context.Context, starts []SessionStart) ([]SessionStarted, error)
}

// StartSessions starts sessions with their first inputs, each as
// CreateSessionWithInput would, but, on a store that is a SessionStarter,
// all in one transaction. Starts beyond the run queue's room get
// ErrOverloaded and store nothing. A start whose session exists already
// (its thread is bound, its idempotency key used) sends its input there
// as Send does: a repeat of a batch (its outcomes were lost in a crash)
// creates nothing twice and records each input once.
func (e *Engine) StartSessions(ctx context.Context, starts []Start) []Started {
	out := make([]Started, len(starts))
	bs, ok := e.outage.Store.(SessionStarter)
	if !ok {
		for i, st := range starts {
			o := &out[i]
			o.Session, o.Event, o.Created, o.Err = e.CreateSessionWithInput(ctx, st.Session, st.Input)
		}
		return out
	}
	room := e.room()
	var batch []SessionStart
	var idx []int
	inputs := make([]Input, len(starts))
	for i, st := range starts {
		in, err := checkInput(st.Input)
		if err == nil {
			err = e.checkNewSession(st.Session)
		}
		switch {
		case err != nil:
			out[i].Err = err
			continue
		case st.Session.IdempotencyKey != "" || in.Answer != nil:
			// A keyed start may be a repeat of an API call, an answer
			// needs a question: the one-at-a-time path knows both.
			o := &out[i]
			o.Session, o.Event, o.Created, o.Err = e.CreateSessionWithInput(ctx, st.Session, st.Input)
			continue
		case room == 0:
			out[i].Err = Errorf(CodeOverloaded, "too many turns are queued (%d); retry shortly", e.maxQueued)
			continue
		}
		room--
		sst, err := e.sessionStart(ctx, st.Session, &in)
		if err != nil {
			out[i].Err = err
			continue
		}
		inputs[i] = in
		batch = append(batch, sst)
		idx = append(idx, i)
	}
	if len(batch) == 0 {
		return out
	}
	res, err := retry(ctx, e.outage, "start sessions", func() ([]SessionStarted, error) {
		return bs.StartSessions(ctx, batch)
	})
	if err == nil && len(res) != len(batch) {
		err = fmt.Errorf("%w: %d outcomes for %d session starts", ErrInvariant, len(res), len(batch))
	}
	for j, i := range idx {
		o := &out[i]
		if err != nil {
			o.Err = fmt.Errorf("start sessions: %w", err)
			continue
		}
		r := res[j]
		switch {
		case r.Err != nil:
			o.Err = r.Err
		case !r.Created:
			// Bound since the caller looked, or a repeat: the input goes
			// to that session (a repeat finds it recorded).
			o.Session = r.Session
			o.Event, _, o.Err = e.send(ctx, r.Session.ID, inputs[i], true)
		default:
			o.Session, o.Created = r.Session, true
			o.Event, o.Err = e.started(r)
		}
	}
	return out
}

// sessionStart builds the store's record of a new session with its
// context and its first input, reserving the input's place under a rate
// limit (Pace) as Send does.
func (e *Engine) sessionStart(ctx context.Context, n NewSession, in *Input) (SessionStart, error) {
	s := e.newSession(n)
	notice, err := e.pace(ctx, s, in)
	if err != nil {
		return SessionStart{}, err
	}
	sst := SessionStart{Session: s, IdempotencyKey: n.IdempotencyKey}
	now := e.now()
	if n.Context != "" {
		evs, err := e.events("", SessionContext{Text: n.Context})
		if err != nil {
			return SessionStart{}, err
		}
		sst.Commits = append(sst.Commits, Commit{SessionID: s.ID, Now: now, Events: evs})
	}
	ps := []Payload{*in}
	if notice != nil {
		ps = append(ps, notice)
	}
	evs, err := e.events("", ps...)
	if err != nil {
		return SessionStart{}, err
	}
	sst.Commits = append(sst.Commits, Commit{SessionID: s.ID, Now: now, InputKey: in.IdempotencyKey, Events: evs})
	return sst, nil
}

// started does for a session the store created what CreateSessionWithInput
// does after its commits: counts, notifies and queues the turn. It returns
// the recorded input.
func (e *Engine) started(r SessionStarted) (Event, error) {
	if len(r.Results) == 0 || len(r.Results[len(r.Results)-1].Events) == 0 {
		return Event{}, fmt.Errorf("%w: session %s started without its input", ErrInvariant, r.Session.ID)
	}
	last := r.Results[len(r.Results)-1]
	e.count("sessions_created")
	e.count("inputs")
	if len(last.Events) > 1 {
		e.count(CounterDeferred) // the rate limit's notice follows the input
	}
	e.hub.notify(r.Session.ID)
	e.kickSeen(r.Session.ID, &last.Session)
	return last.Events[0], nil
}

// room is how many more new turns the run queue takes now (StartSessions
// reserves them at once; like admit, it is checked before the commit and
// the turns are counted when kicked, so concurrent input may overshoot the
// limit by a batch).
func (e *Engine) room() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return 0
	}
	return max(0, e.maxQueued-e.waiting)
}
