package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxInputChars bounds one user message.
const MaxInputChars = 100_000

// NewSession describes a session to create.
type NewSession struct {
	Agent     string
	Origin    Origin
	ThreadKey string
	// Interactive is true when a person can answer questions and approvals.
	Interactive bool
	StartedBy   string
	// StartedKey is the name of the API key the starter authenticated
	// with, if any.
	StartedKey string
	// IdempotencyKey makes creation safe to retry: the same key returns the
	// session created the first time.
	IdempotencyKey string
	// Context, when set, is recorded as a session.context event that the
	// model sees before the first input (e.g. the scheduled run a Slack
	// thread replies to). It starts no turn.
	Context string
}

// CreateSession creates a session, or returns the one an earlier call with
// the same idempotency key (or thread key) created; created tells which.
func (e *Engine) CreateSession(ctx context.Context, n NewSession) (Session, bool, error) {
	if err := e.checkNewSession(n); err != nil {
		return Session{}, false, err
	}
	got, created, err := e.store.CreateSession(ctx, e.newSession(n), n.IdempotencyKey)
	if err != nil {
		return Session{}, false, fmt.Errorf("create session: %w", err)
	}
	if created {
		e.count("sessions_created")
		if n.Context != "" {
			evs, err := e.events("", SessionContext{Text: n.Context})
			if err != nil {
				return Session{}, false, err
			}
			res, err := e.commit(ctx, Commit{SessionID: got.ID, Events: evs})
			if err != nil {
				return Session{}, false, fmt.Errorf("record session context: %w", err)
			}
			got = res.Session
		}
	}
	return got, created, nil
}

// newSession is the record of a checked NewSession, with a new id.
func (e *Engine) newSession(n NewSession) Session {
	if n.Origin == "" {
		n.Origin = OriginAPI
	}
	now := e.now()
	return Session{
		ID:          e.newID("ses"),
		Agent:       n.Agent,
		Origin:      n.Origin,
		ThreadKey:   n.ThreadKey,
		Interactive: n.Interactive,
		StartedBy:   n.StartedBy,
		StartedKey:  n.StartedKey,
		Status:      StatusIdle,
		CreatedAt:   now,
		UpdatedAt:   now,
	}
}

// checkNewSession refuses a NewSession CreateSession would refuse.
func (e *Engine) checkNewSession(n NewSession) error {
	if n.Agent == "" {
		return Errorf(CodeInvalid, "agent is required")
	}
	if _, ok := e.agents[n.Agent]; !ok {
		return Errorf(CodeInvalid, "unknown agent %q", n.Agent)
	}
	return nil
}

// Input is a message to a session.
type Input struct {
	Text   string `json:"text"`
	Author string `json:"author,omitempty"`
	// Mode overrides the agent's input mode: ModeQueue or ModeInterrupt.
	Mode string `json:"mode,omitempty"`
	// IdempotencyKey: a repeat returns the originally recorded event and
	// queues nothing.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Answer answers the open question. Without it, text from the person
	// the session talks to answers too (matched to an option by value or
	// label); text from anyone else waits for the answer as steering.
	Answer *Answer `json:"answer,omitempty"`
	// RetryOf is the id of the user.message this one runs again (see
	// ResumeOptions.Retry); the engine sets it.
	RetryOf string `json:"retry_of,omitempty"`
	// RequestID is the id of the API request that sent the input, which
	// its turn's tools see (tools.Call.RequestID).
	RequestID string `json:"request_id,omitempty"`
	// Files are the files shared with the message (see FileRef).
	Files []FileRef `json:"files,omitempty"`
	// RunAt, when set, is when a rate limit lets the message start its
	// turn (see Pace); the engine sets it.
	RunAt time.Time `json:"run_at,omitzero"`
}

// CreateSessionWithInput creates a session (see CreateSession) and sends in
// as its first message (see Send), or does neither: when in cannot be
// queued (the run queue is full) nothing is stored. A repeat with the same
// idempotency keys returns the session and the event recorded the first
// time, even while the queue is full.
func (e *Engine) CreateSessionWithInput(ctx context.Context, n NewSession, in Input) (s Session, ev Event, created bool, err error) {
	if in, err = checkInput(in); err != nil {
		return Session{}, Event{}, false, err
	}
	if n.IdempotencyKey != "" {
		prev, err := e.store.SessionByKey(ctx, n.IdempotencyKey)
		switch {
		case err == nil:
			// A repeat: send finds the first message before it counts
			// the queue.
			ev, _, err := e.send(ctx, prev.ID, in, true)
			return prev, ev, false, err
		case !errors.Is(err, ErrNotFound):
			return Session{}, Event{}, false, err
		}
	}
	if err := e.admit(""); err != nil {
		return Session{}, Event{}, false, err
	}
	if s, created, err = e.CreateSession(ctx, n); err != nil {
		return Session{}, Event{}, false, err
	}
	// Admitted above, so a queue that filled meanwhile cannot leave the
	// new session without its message. A session just created is sent to
	// as created, without reading it again.
	if created {
		ev, _, err = e.sendTo(ctx, s, in, false)
	} else {
		ev, _, err = e.send(ctx, s.ID, in, true)
	}
	return s, ev, created, err
}

// Send records a user.message and queues a turn for it. It returns the
// recorded event; duplicate is true when the idempotency key was seen before,
// in which case the original event is returned and nothing is queued, even
// while the run queue is full.
func (e *Engine) Send(ctx context.Context, sessionID string, in Input) (ev Event, duplicate bool, err error) {
	if in, err = checkInput(in); err != nil {
		return Event{}, false, err
	}
	return e.send(ctx, sessionID, in, true)
}

// checkInput trims and checks input before anything is read or written.
func checkInput(in Input) (Input, error) {
	if in.Answer != nil {
		a := *in.Answer
		a.Call = nil // the engine's own, from the open question
		in.Answer = &a
	}
	in.Text = strings.TrimRight(in.Text, " \t\r\n")
	if strings.TrimSpace(in.Text) == "" && len(in.Files) == 0 {
		return in, Errorf(CodeInvalid, "text is required")
	}
	if n := utf8.RuneCountInString(in.Text); n > MaxInputChars {
		return in, Errorf(CodeInvalid, "text is %d characters; at most %d", n, MaxInputChars)
	}
	switch in.Mode {
	case "", ModeQueue, ModeInterrupt:
	default:
		return in, Errorf(CodeInvalid, "mode must be %q or %q", ModeQueue, ModeInterrupt)
	}
	return in, nil
}

// send records checked input; with admit, new input is refused when the
// run queue is full (a duplicate is answered first).
func (e *Engine) send(ctx context.Context, sessionID string, in Input, admit bool) (Event, bool, error) {
	cur, err := e.store.Session(ctx, sessionID)
	if err != nil {
		return Event{}, false, err
	}
	return e.sendTo(ctx, cur, in, admit)
}

// sendTo is send to the session as cur was read; the commit checks again
// what it relies on.
func (e *Engine) sendTo(ctx context.Context, cur Session, in Input, admit bool) (Event, bool, error) {
	sessionID := cur.ID
	q := cur.OpenQuestion()
	switch {
	case in.Answer != nil:
		if err := resolveAnswer(q, in.Answer); err != nil {
			if in.IdempotencyKey == "" || !errors.Is(err, ErrConflict) {
				return Event{}, false, err
			}
			// The question is gone: a retried answer finds its original
			// event in the commit; a new one is refused there.
			in.Answer.QuestionID = ""
		}
	case q != nil && in.Author == cur.StartedBy:
		a := &Answer{QuestionID: q.ID, Text: in.Text}
		if o, ok := q.match(in.Text); ok {
			a.Value = o.Value
		}
		in.Answer = a
	}
	if in.Answer != nil && q != nil && in.Answer.QuestionID == q.ID {
		in.Answer.Call = q.Call
	}
	var notice Payload
	// Input the queue refuses (the commit below refuses it; a duplicate
	// is still answered) would waste a reservation: the platform's inbox
	// retries it.
	if !admit || e.admit(sessionID) == nil {
		var err error
		if notice, err = e.pace(ctx, cur, &in); err != nil {
			return Event{}, false, err
		}
	}
	ps := []Payload{in}
	if notice != nil {
		ps = append(ps, notice)
	}
	evs, err := e.events("", ps...)
	if err != nil {
		return Event{}, false, err
	}
	res, err := e.commit(ctx, Commit{
		SessionID: sessionID,
		InputKey:  in.IdempotencyKey,
		Events:    evs,
		Update: func(s *Session) error {
			// Not called for a duplicate, which is answered even when the
			// queue is full.
			if admit {
				if err := e.admit(sessionID); err != nil {
					return err
				}
			}
			if s.Status == StatusInterrupted || s.Status == StatusFailed {
				return Errorf(CodeConflict, "resume the %s session before sending input", s.Status)
			}
			if in.Answer == nil {
				return nil
			}
			if open := s.OpenQuestion(); open == nil || open.ID != in.Answer.QuestionID {
				return Errorf(CodeConflict, "the question was already answered or closed")
			}
			s.Question = nil
			return nil
		},
	})
	if err != nil {
		return Event{}, false, err
	}
	if res.Duplicate {
		return res.Events[0], true, nil
	}
	e.count("inputs")
	if notice != nil {
		e.count(CounterDeferred)
	}
	if res.Session.OpenQuestion() != nil {
		return res.Events[0], false, nil // steering: waits for the answer
	}
	e.kickSeen(sessionID, &res.Session)
	mode := in.Mode
	if mode == "" {
		if a, ok := e.agents[res.Session.Agent]; ok {
			mode = a.InputMode
		}
	}
	if mode == ModeInterrupt && notice == nil {
		if e.cancelRunning(sessionID, errInterrupted) == nil && res.Session.Status == StatusRunning {
			e.interruptElsewhere(ctx, sessionID) // the turn runs on another replica
		}
	}
	return res.Events[0], false, nil
}

// errNothingToDo aborts a commit that would change nothing.
var errNothingToDo = errors.New("nothing to do")

// Cancel stops the running turn (outcome cancelled), drops queued input
// (recording an input_cancelled session.error for each) and closes the
// open question, leaving the session idle. It waits for the turn to stop
// or ctx to end.
func (e *Engine) Cancel(ctx context.Context, sessionID string) (Session, error) {
	s, err := e.Session(ctx, sessionID)
	if err != nil {
		return Session{}, err
	}
	if s.Status == StatusInterrupted || s.Status == StatusFailed {
		return s, nil
	}
	if done := e.cancelRunning(sessionID, errCancelled); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return Session{}, ctx.Err()
		}
		// The turn may have ended on its own just before the cancel, with a
		// question open or input queued: clear those too.
		if s, err = e.Session(ctx, sessionID); err != nil {
			return Session{}, err
		}
	}
	if s.Status == StatusRunning && e.SharesStore() {
		// The turn runs on another replica: it stops it.
		if s, err = e.stopElsewhere(ctx, sessionID); err != nil {
			return Session{}, err
		}
	}
	// No turn runs: drop queued input and close the question, if any.
	pending, err := e.pendingInputs(ctx, s)
	if err != nil {
		return Session{}, err
	}
	ps := droppedErrors(pending, notRunCancelled)
	evs, err := e.events("", append(ps, SessionStatus{Status: StatusIdle, Reason: ReasonCancelled})...)
	if err != nil {
		return Session{}, err
	}
	res, err := e.commit(ctx, Commit{
		SessionID: sessionID,
		Update: func(s *Session) error {
			if s.Status == StatusRunning {
				return Errorf(CodeConflict, "a turn started while cancelling; cancel again")
			}
			if len(pending) == 0 && s.Question == nil && s.Status == StatusIdle {
				return errNothingToDo
			}
			s.Status, s.Question = StatusIdle, nil
			if len(pending) > 0 {
				s.InputCursor = pending[len(pending)-1].Seq
			}
			return nil
		},
		Events: evs,
	})
	if errors.Is(err, errNothingToDo) {
		return e.Session(ctx, sessionID)
	}
	if err != nil {
		return Session{}, err
	}
	return res.Session, nil
}

// Session returns one session.
func (e *Engine) Session(ctx context.Context, id string) (Session, error) {
	return e.store.Session(ctx, id)
}

// Sessions lists sessions, newest first.
func (e *Engine) Sessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	return e.store.Sessions(ctx, f)
}

// Events returns events after seq; see Store.Events.
func (e *Engine) Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	if _, err := e.store.Session(ctx, sessionID); err != nil {
		return nil, err
	}
	return e.store.Events(ctx, sessionID, after, limit)
}

// Results returns every committed result of a session, oldest first.
func (e *Engine) Results(ctx context.Context, sessionID string) ([]ResultRecord, error) {
	if _, err := e.store.Session(ctx, sessionID); err != nil {
		return nil, err
	}
	return e.store.Results(ctx, sessionID)
}

// Changed returns a channel closed at the next commit to the session. Read
// events after taking the channel to miss nothing.
func (e *Engine) Changed(sessionID string) <-chan struct{} {
	return e.hub.wait(sessionID)
}

// commit writes to the store and wakes the session's watchers.
func (e *Engine) commit(ctx context.Context, c Commit) (CommitResult, error) {
	if c.Now.IsZero() {
		c.Now = e.now()
	}
	f := fenceCommit(ctx, &c)
	res, err := e.store.Commit(ctx, c)
	if err != nil {
		fenced(f, err)
		return res, err
	}
	if !res.Duplicate && len(res.Events) > 0 {
		e.hub.notify(c.SessionID)
	}
	return res, nil
}

// pendingInputs returns the user.message events not yet taken into a turn.
func (e *Engine) pendingInputs(ctx context.Context, s Session) ([]Event, error) {
	evs, err := e.store.Events(ctx, s.ID, s.InputCursor, 0)
	if err != nil {
		return nil, fmt.Errorf("read queued input: %w", err)
	}
	return queuedInputs(evs, s.InputCursor), nil
}

// queuedInputs are the user.message events of evs after the input cursor,
// but for answers a held call took (held.go).
func queuedInputs(evs []Event, cursor int64) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Type == EventUserMessage && ev.Seq > cursor && !isHeldAnswer(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// events builds one event per payload, for the turn (empty for none), each
// with a new id.
func (e *Engine) events(turnID string, ps ...Payload) ([]Event, error) {
	evs := make([]Event, 0, len(ps))
	for _, p := range ps {
		ev, err := NewEvent(p)
		if err != nil {
			return nil, err
		}
		ev.ID, ev.TurnID = e.newID("evt"), turnID
		evs = append(evs, ev)
	}
	return evs, nil
}
