package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ResumeOptions says what Resume does besides resetting the session.
type ResumeOptions struct {
	// Retry queues again the input the session's stop left unanswered:
	// the input of the broken turn and the queued input it cancelled (the
	// user.message events its session.error events name), as new
	// user.message events in their original order, each with RetryOf set
	// to the original. Each original is queued again at most once: the new
	// event's idempotency key derives from the original's id, so a second
	// retry, or a retried request, queues nothing. Only stops since the
	// session's checkpoint count: once a turn has completed after a stop,
	// the conversation has moved on and its input is not retried.
	Retry bool
	// RequestID is recorded on the retried inputs (Input.RequestID).
	RequestID string
}

// Resumed is what Resume did.
type Resumed struct {
	Session Session
	// Retried are the user.message events Retry queued, in order.
	Retried []Event
}

// Resume resets an interrupted or failed session to idle at its last
// checkpoint: the broken turn's events, its input included, stay in the log
// for audit but leave the model's context. Resuming an idle session changes
// nothing. It is ResumeWith without options.
func (e *Engine) Resume(ctx context.Context, sessionID string) (Session, error) {
	r, err := e.ResumeWith(ctx, sessionID, ResumeOptions{})
	return r.Session, err
}

// ResumeWith resumes the session (see Resume) and, with opts.Retry, queues
// the input its stop left unanswered again.
func (e *Engine) ResumeWith(ctx context.Context, sessionID string, opts ResumeOptions) (Resumed, error) {
	var retry []retried
	if opts.Retry {
		s, err := e.store.Session(ctx, sessionID)
		if err != nil {
			return Resumed{}, err
		}
		if retry, err = e.unanswered(ctx, s); err != nil {
			return Resumed{}, err
		}
		if len(retry) > 0 {
			// Refused before anything is written, like any input.
			if err := e.admit(sessionID); err != nil {
				return Resumed{}, err
			}
		}
	}
	s, err := e.reset(ctx, sessionID, opts.Retry)
	if err != nil {
		return Resumed{}, err
	}
	out := Resumed{Session: s}
	for _, r := range retry {
		res, err := e.requeue(ctx, sessionID, r, opts.RequestID)
		if err != nil {
			return Resumed{}, err
		}
		out.Session = res.Session
		if !res.Duplicate {
			out.Retried = append(out.Retried, res.Events[0])
		}
	}
	// Retried input, and input that raced with the failure, runs now.
	if pending, err := e.pendingInputs(ctx, out.Session); err == nil && len(pending) > 0 {
		e.kick(sessionID)
	}
	return out, nil
}

// reset moves an interrupted or failed session to idle. A running session
// is a conflict, unless retry: then its turn may be the retry's own, and a
// repeated request must be answered, not refused.
func (e *Engine) reset(ctx context.Context, sessionID string, retry bool) (Session, error) {
	evs, err := e.events("", SessionStatus{Status: StatusIdle, Reason: ReasonResumed})
	if err != nil {
		return Session{}, err
	}
	res, err := e.commit(ctx, Commit{
		SessionID: sessionID,
		Update: func(s *Session) error {
			switch s.Status {
			case StatusInterrupted, StatusFailed:
				s.Status = StatusIdle
				return nil
			case StatusIdle, StatusAwaitingInput:
				return errNothingToDo
			case StatusRunning:
				if retry {
					return errNothingToDo
				}
				fallthrough
			default:
				return Errorf(CodeConflict, "the session is %s; only an interrupted or failed session can be resumed", s.Status)
			}
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

// retried is an input to queue again: the original event and its payload.
type retried struct {
	id    string
	input Input
}

// unanswered returns the inputs that the session's stops since its
// checkpoint reported as not answered, in their original order. A stop is
// a commit of session.error events ending in status interrupted or
// failed; the session.error events Cancel writes end in idle and are not
// retried (a person cancelled that input on purpose).
func (e *Engine) unanswered(ctx context.Context, s Session) ([]retried, error) {
	// The stops are after the checkpoint, and so, nearly always, are the
	// inputs they name; the whole log is read only for one that is not.
	evs, err := e.store.Events(ctx, s.ID, s.Checkpoint, 0)
	if err != nil {
		return nil, fmt.Errorf("read the log: %w", err)
	}
	out, missing, err := unansweredIn(evs, s.Checkpoint)
	if err != nil || !missing || s.Checkpoint == 0 {
		return out, err
	}
	if evs, err = e.store.Events(ctx, s.ID, 0, 0); err != nil {
		return nil, fmt.Errorf("read the log: %w", err)
	}
	out, _, err = unansweredIn(evs, s.Checkpoint)
	return out, err
}

// unansweredIn is unanswered over evs; missing reports a stop that named
// an input evs do not hold.
func unansweredIn(evs []Event, checkpoint int64) (out []retried, missing bool, err error) {
	var stopped, named []string
	inputs := map[string]Event{}
	for _, ev := range evs {
		if ev.Type == EventUserMessage {
			inputs[ev.ID] = ev
			continue
		}
		if ev.Seq <= checkpoint || (ev.Type != EventSessionError && ev.Type != EventSessionStatus) {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			return nil, false, err
		}
		switch p := p.(type) {
		case SessionError:
			if p.InputID != "" {
				named = append(named, p.InputID)
			}
		case SessionStatus:
			if p.Status == StatusInterrupted || p.Status == StatusFailed {
				stopped = append(stopped, named...)
			}
			named = nil
		}
	}
	for _, id := range stopped {
		ev, ok := inputs[id]
		missing = missing || !ok
		if !ok || slices.ContainsFunc(out, func(r retried) bool { return r.id == id }) {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			return nil, false, err
		}
		out = append(out, retried{id: id, input: p.(Input)})
	}
	slices.SortFunc(out, func(a, b retried) int { return int(inputs[a.id].Seq - inputs[b.id].Seq) })
	return out, missing, nil
}

// requeue records r's input again as a new user.message, once per original.
func (e *Engine) requeue(ctx context.Context, sessionID string, r retried, requestID string) (CommitResult, error) {
	in := Input{
		Text:           r.input.Text,
		Author:         r.input.Author,
		Answer:         r.input.Answer,
		IdempotencyKey: "retry:" + r.id,
		RetryOf:        r.id,
		RequestID:      requestID,
	}
	evs, err := e.events("", in)
	if err != nil {
		return CommitResult{}, err
	}
	res, err := e.commit(ctx, Commit{
		SessionID: sessionID,
		InputKey:  in.IdempotencyKey,
		Events:    evs,
		Update: func(s *Session) error {
			if s.Status == StatusInterrupted || s.Status == StatusFailed {
				return Errorf(CodeConflict, "the session stopped again while its input was retried; resume it again")
			}
			return nil
		},
	})
	if err != nil {
		return CommitResult{}, fmt.Errorf("retry input %s: %w", r.id, err)
	}
	if !res.Duplicate {
		e.count("inputs_retried")
	}
	return res, nil
}
