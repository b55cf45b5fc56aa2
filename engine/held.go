package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"brain/tools"
)

// A tool may ask the person for input while its call waits (MCP
// 2025-11-25 elicitation/create: the server holds the call open on its
// connection). Such a call cannot outlive this process, so unlike a
// multi round-trip request (elicit.go) the turn does not end: the
// question is committed at once (every surface shows it as it shows ask's),
// the call waits in process for the answer, at most ElicitationTimeout,
// and the answer goes back to the tool instead of starting a turn. The
// tool's own timeout does not run while the person is asked. A restart
// while the question is open ends the call as an unknown outcome and says
// so in the session, naming the tool (recover.go); so does the bound.

// DefaultElicitationTimeout bounds how long a call held open for the
// person's input waits for the answer.
const DefaultElicitationTimeout = 10 * time.Minute

// errToolTimeout is the cause of a held call's own timeout.
var errToolTimeout = errors.New("tool timeout")

// errElicitExpired is the cause of a held call stopped because its
// question got no answer in time (or the turn ended).
var errElicitExpired = errors.New("no answer to the tool's request for input")

func (e *Engine) elicitWait() time.Duration {
	if e.elicitTimeout > 0 {
		return e.elicitTimeout
	}
	return DefaultElicitationTimeout
}

// heldCall is one run of a tool call that may ask while it waits: the
// tool's timeout as a clock that stops while the person is asked, and
// the Elicit function the tool gets.
type heldCall struct {
	e       *Engine
	t       *turn
	call    ToolCall
	timeout time.Duration

	mu      sync.Mutex
	ctx     context.Context // the run's, for the engine's own commits
	cancel  context.CancelCauseFunc
	timer   *time.Timer
	left    time.Duration
	started time.Time
	asked   string // the tool's last request for input, for the result
}

func (e *Engine) newHeld(t *turn, call ToolCall, timeout time.Duration) *heldCall {
	return &heldCall{e: e, t: t, call: call, timeout: timeout, left: timeout}
}

// start runs the tool's clock; the returned context ends at its timeout
// (errToolTimeout) or when a question goes unanswered (errElicitExpired).
func (h *heldCall) start(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	h.mu.Lock()
	h.ctx, h.cancel = ctx, cancel
	h.started = time.Now()
	h.timer = time.AfterFunc(h.left, func() { cancel(errToolTimeout) })
	h.mu.Unlock()
	return ctx, func() {
		h.mu.Lock()
		h.timer.Stop()
		h.mu.Unlock()
		cancel(nil)
	}
}

func (h *heldCall) pause() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer.Stop() {
		h.left -= time.Since(h.started)
	}
}

func (h *heldCall) resume() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if context.Cause(h.ctx) != nil {
		return
	}
	h.started = time.Now()
	cancel := h.cancel
	h.timer = time.AfterFunc(max(h.left, 0), func() { cancel(errToolTimeout) })
}

// outcome replaces what the tool said when the engine stopped it.
func (h *heldCall) outcome(out toolOutcome) toolOutcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx == nil || !out.IsError {
		return out // a result that came back stands
	}
	switch context.Cause(h.ctx) {
	case errToolTimeout:
		return unknown("%q timed out after %s; its outcome is unknown", h.call.Name, h.timeout)
	case errElicitExpired:
		return unknown("%s asked the person for input (%q) and no answer came within %s; the call was stopped and its outcome is unknown: it may have had effects",
			h.call.Name, h.asked, h.e.elicitWait())
	}
	return out
}

// elicit asks the person while the call waits. It is the tool's
// tools.ElicitFunc.
func (h *heldCall) elicit(ctx context.Context, el tools.Elicitation) (tools.Reply, error) {
	e, t := h.e, h.t
	switch {
	case !t.session.Interactive:
		return declineHeld(nobodyThere(t.session, "answer the tool's request for input")), nil
	case !t.claimQuestion():
		return declineHeld("another question is open in this turn; brain asks one at a time"), nil
	}
	defer t.asking.Store(false)
	h.pause()
	defer h.resume()
	h.mu.Lock()
	runCtx := h.ctx
	h.asked = el.Message
	h.mu.Unlock()
	wctx := context.WithoutCancel(runCtx)
	q := elicitQuestion(e.newID("q"), t.id, h.call, &tools.InputRequired{Elicitation: el})
	q.AskedAt = e.now()
	q.Call.Held = true
	q.Text = clipRunes(q.Text+fmt.Sprintf("\n\n(The call waits up to %s for your answer.)", e.elicitWait()), 4000)
	seq, err := e.openHeld(wctx, t, q)
	if err != nil {
		e.log.Warn("ask the person for a tool", tools.LogTool, h.call.Name, tools.LogSession, t.session.ID, tools.LogErr, err)
		return declineHeld("brain could not show the request to the person"), nil
	}
	bound := time.NewTimer(e.elicitWait())
	defer bound.Stop()
	for {
		woke := e.hub.wait(t.session.ID)
		a, done, err := e.heldAnswer(wctx, t.session.ID, q.ID, seq)
		if err != nil {
			e.log.Warn("read the answer to a tool's request for input", tools.LogSession, t.session.ID, tools.LogErr, err)
		}
		if done {
			if a == nil {
				return tools.Reply{Action: tools.ActionCancel}, nil // the question was closed (cancel, stop)
			}
			return replyOf(q.Call, *a), nil
		}
		select {
		case <-woke:
			continue
		case <-ctx.Done():
		case <-runCtx.Done():
		case <-bound.C:
		}
		// Unanswered: close the question unless an answer came just now.
		closed, err := e.expireHeld(wctx, t, q, h.call.Name)
		if err != nil {
			e.log.Warn("close an unanswered tool question", tools.LogSession, t.session.ID, tools.LogErr, err)
		}
		if !closed && err == nil {
			continue
		}
		h.cancel(errElicitExpired)
		return tools.Reply{}, errElicitExpired
	}
}

func declineHeld(reason string) tools.Reply {
	return tools.Reply{Action: tools.ActionDecline, Reason: reason}
}

// openHeld commits the question of a held call while the turn runs and
// returns the seq of its event.
func (e *Engine) openHeld(ctx context.Context, t *turn, q *Question) (int64, error) {
	evs, err := e.events(t.id, *q)
	if err != nil {
		return 0, err
	}
	res, err := e.commit(ctx, Commit{SessionID: t.session.ID, Events: evs, Update: func(s *Session) error {
		if s.Status != StatusRunning || s.OpenQuestion() != nil {
			return errTurnEnded
		}
		s.Question = evs[0].Data
		return nil
	}})
	if err != nil {
		return 0, err
	}
	return res.Events[0].Seq, nil
}

// heldAnswer reports whether the held question is closed, and its answer
// when it was answered (nil when it was closed without one).
func (e *Engine) heldAnswer(ctx context.Context, sessionID, questionID string, after int64) (*Answer, bool, error) {
	s, err := e.store.Session(ctx, sessionID)
	if err != nil {
		return nil, false, err
	}
	if q := s.OpenQuestion(); q != nil && q.ID == questionID {
		return nil, false, nil
	}
	evs, err := e.store.Events(ctx, sessionID, after, 0)
	if err != nil {
		return nil, false, err
	}
	for _, ev := range evs {
		if ev.Type != EventUserMessage {
			continue
		}
		if p, err := ev.Decode(); err == nil {
			if in, ok := p.(Input); ok && in.Answer != nil && in.Answer.QuestionID == questionID {
				return in.Answer, true, nil
			}
		}
	}
	return nil, true, nil
}

// expireHeld closes the held question nobody answered in time and tells
// the person, naming the tool. closed is false when the question was
// answered or closed meanwhile.
func (e *Engine) expireHeld(ctx context.Context, t *turn, q *Question, tool string) (bool, error) {
	evs, err := e.events(t.id, SessionError{Code: CodeElicitationUnanswered,
		Message: fmt.Sprintf("%s asked for your input and no answer came within %s, so the call was stopped; its outcome is unknown (it may have had effects).", tool, e.elicitWait())})
	if err != nil {
		return false, err
	}
	_, err = e.commit(ctx, Commit{SessionID: t.session.ID, Events: evs, Update: func(s *Session) error {
		if open := s.OpenQuestion(); open == nil || open.ID != q.ID {
			return errNothingToDo
		}
		s.Question = nil
		return nil
	}})
	if errors.Is(err, errNothingToDo) {
		return false, nil
	}
	return err == nil, err
}

// heldLost is the error result and the session's message for a call that
// was held open for the person's input when brain stopped.
func heldLost(q *Question) (result, message string) {
	msg := q.Call.Elicitation.Message
	return fmt.Sprintf("brain stopped while %s waited for the person's input (%q); the call ended and its outcome is unknown: it may have had effects", q.Call.Tool, msg),
		fmt.Sprintf("brain restarted while %s was waiting for your answer (%q), so that call ended; its outcome is unknown (it may have had effects). %s", q.Call.Tool, msg, resumeHint)
}

// isHeldAnswer reports whether a user.message answers a held call's
// question: the call took it, so it is no turn's input.
func isHeldAnswer(ev Event) bool {
	p, err := ev.Decode()
	if err != nil {
		return false
	}
	in, ok := p.(Input)
	return ok && in.Answer != nil && in.Answer.Call != nil && in.Answer.Call.Held
}
