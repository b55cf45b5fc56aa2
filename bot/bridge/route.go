package bridge

import (
	"context"
	"errors"

	"brain/engine"
	"brain/store"
)

// Router routes what arrives in a platform thread to the thread's session:
// the routing every platform shares, written once. A platform decides
// whether a message is for brain and what session to create; the Router
// finds the session, wakes it and sends the input.
type Router struct {
	Threads store.Threads
	Engine  RouterEngine
}

// RouterEngine is what the Router asks of the engine; *engine.Engine has
// it.
type RouterEngine interface {
	Resume(ctx context.Context, sessionID string) (engine.Session, error)
	Send(ctx context.Context, sessionID string, in engine.Input) (ev engine.Event, duplicate bool, err error)
}

var _ RouterEngine = (*engine.Engine)(nil)

// Session returns the session bound to threadKey; found is false when the
// thread has none yet.
func (r Router) Session(ctx context.Context, threadKey string) (s engine.Session, found bool, err error) {
	s, err = r.Threads.SessionByThread(ctx, threadKey)
	switch {
	case err == nil:
		return s, true, nil
	case errors.Is(err, engine.ErrNotFound):
		return engine.Session{}, false, nil
	}
	return engine.Session{}, false, err
}

// Send sends in to s, resuming s first when a crash interrupted it or it
// failed, so a new message in the thread is what continues it. An
// overloaded engine gives ErrRetryLater (the inbox item waits);
// duplicate reports input sent before under the same idempotency key.
func (r Router) Send(ctx context.Context, s engine.Session, in engine.Input) (duplicate bool, err error) {
	if s.Status == engine.StatusInterrupted || s.Status == engine.StatusFailed {
		if _, err := r.Engine.Resume(ctx, s.ID); err != nil {
			return false, err
		}
	}
	_, duplicate, err = r.Engine.Send(ctx, s.ID, in)
	if errors.Is(err, engine.ErrOverloaded) {
		return false, ErrRetryLater
	}
	return duplicate, err
}

// Refusal is what to tell a person whose request the engine refused (not
// an approver, already decided, expired, ...); refused is false for
// success and for internal errors, which are the operator's to see, not
// the person's.
func Refusal(err error) (text string, refused bool) {
	var ee *engine.Error
	if err == nil || !errors.As(err, &ee) || ee.Code == engine.CodeInternal {
		return "", false
	}
	return engine.ErrorMessage(err), true
}
