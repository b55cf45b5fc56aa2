package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"brain/tools"
)

// turn is the state of one running turn.
type turn struct {
	// onDelta gets the text of the round's answer as it streams (nil:
	// nobody watches).
	onDelta  func(text string)
	id       string
	session  Session
	agent    *Agent
	system   string // the agent's instructions and what Extend added
	inputs   []Event
	tools    map[string]*tools.Tool
	specs    []ToolSpec
	messages []Message
	usage    Usage
	rounds   int
	// The tools' call context: the request that sent the input, and the
	// model message of the current round and the model that wrote it.
	requestID string
	author    string // the newest input's author (tools.Call.Requester)
	message   string
	model     string
	// ask is the ask tool when offered; question is the one this turn asked.
	ask      *tools.Tool
	question *Question
	// asking is set once a tool's request for input claimed the question;
	// resume holds the replies of calls sent again with an answer.
	asking  atomic.Bool
	resume  map[string]*tools.Resume
	started time.Time // for the Observer
	// summarized is set once the turn has compacted its context with a
	// summary; a turn writes at most one. firstSize is the estimated size
	// of its first request and maxRounds its cap on rounds, to foresee how
	// much room the rest of the turn needs.
	summarized bool
	firstSize  int
	maxRounds  int
}

// runTurn takes the session's queued input into one turn and runs it to its
// end. ctx is cancelled (with a cause) by interrupt, cancel and shutdown.
// seen, when set, is the session as a recent commit returned it (see
// startTurn). It returns the input cursor the turn took the session to
// (the seq of its newest input), or 0 when no turn started.
func (e *Engine) runTurn(ctx context.Context, id string, seen *Session) (cursor int64) {
	// Records must be written even after the turn is cancelled.
	wctx := context.WithoutCancel(ctx)
	t, err := e.beginTurn(wctx, id, seen)
	if err != nil {
		if errors.Is(err, ErrFenced) {
			logLeaseLost(e.log.With(tools.LogSession, id), context.Cause(ctx), err)
		} else if !errors.Is(err, errNothingToDo) {
			e.log.Error("start turn", tools.LogSession, id, tools.LogErr, err)
		}
		return 0
	}
	cursor = t.inputs[len(t.inputs)-1].Seq
	e.count("turns")
	e.observeTurnStart(t)
	log := e.log.With(tools.LogSession, id, tools.LogTurn, t.id)
	outcome, err := e.loop(ctx, t)
	if errors.Is(context.Cause(ctx), errLeaseLost) || errors.Is(err, ErrFenced) {
		// Another replica may be recovering the session: it records how
		// the turn ended, not this one.
		logLeaseLost(log, context.Cause(ctx), err)
		return cursor
	}
	if err != nil {
		e.failTurn(wctx, t, err, context.Cause(ctx))
		return cursor
	}
	if err := e.endTurn(wctx, t, outcome, context.Cause(ctx)); errors.Is(err, ErrFenced) {
		logLeaseLost(log, context.Cause(ctx), err)
	} else if err != nil {
		log.Error("end turn", tools.LogErr, err)
	}
	return cursor
}

// errStaleSession aborts a turn's start that used a session read before
// its input cursor moved: the start is tried again with a fresh read.
var errStaleSession = errors.New("the session changed since it was seen")

// beginTurn is startTurn, made again from a fresh read of the session when
// seen was stale.
func (e *Engine) beginTurn(ctx context.Context, id string, seen *Session) (*turn, error) {
	t, err := e.startTurn(ctx, id, seen)
	if errors.Is(err, errStaleSession) {
		return e.startTurn(ctx, id, nil)
	}
	return t, err
}

// startTurn marks the session running and takes its queued input. seen,
// when set and not running, stands for the session (it saves a read): it
// is what a commit here returned, and its input cursor, the one thing
// taken from it, is checked again in the commit (errStaleSession when it
// moved since).
func (e *Engine) startTurn(ctx context.Context, id string, seen *Session) (*turn, error) {
	var s Session
	if seen != nil && seen.Status != StatusRunning {
		s = *seen
	} else {
		var err error
		if s, err = e.store.Session(ctx, id); err != nil {
			return nil, err
		}
	}
	if s.Status != StatusIdle && s.Status != StatusAwaitingInput {
		return nil, errNothingToDo // interrupted sessions wait for resume
	}
	if s.OpenQuestion() != nil {
		return nil, errNothingToDo // steering waits for the answer
	}
	// One read of the log from the context checkpoint gives the queued
	// input (always after it) and, with the events the turn's start
	// commits, the model's context: its cost does not grow with the log.
	history, err := e.store.Events(ctx, id, s.ContextSeq, 0)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	inputs, _ := e.dueInputs(id, queuedInputs(history, s.InputCursor))
	if len(inputs) == 0 {
		return nil, errNothingToDo
	}
	agent, ok := e.agents[s.Agent]
	if !ok {
		return nil, fmt.Errorf("session %s: agent %q is not configured", id, s.Agent)
	}
	t := &turn{id: e.newID("turn"), agent: agent, inputs: inputs}
	ids := make([]string, len(inputs))
	for i, in := range inputs {
		ids[i] = in.ID
	}
	evs, err := e.events(t.id, TurnStarted{InputIDs: ids}, SessionStatus{Status: StatusRunning, Reason: ReasonTurnStarted})
	if err != nil {
		return nil, err
	}
	cursor := inputs[len(inputs)-1].Seq
	res, err := e.commit(ctx, Commit{
		SessionID: id,
		Update: func(cur *Session) error {
			if cur.Status != StatusIdle && cur.Status != StatusAwaitingInput || cur.OpenQuestion() != nil {
				return errNothingToDo
			}
			if cur.InputCursor != s.InputCursor {
				return errStaleSession // the input was taken or dropped since
			}
			cur.Status, cur.InputCursor = StatusRunning, cursor
			return nil
		},
		Events: evs,
	})
	if err != nil {
		return nil, err
	}
	t.session = res.Session
	if history, err = historyWith(ctx, e.store, id, s.ContextSeq, history, res.Events); err != nil {
		return nil, err
	}
	var unreadable error
	t.messages, unreadable = buildMessages(history)
	if unreadable != nil {
		// The model's context is rebuilt without them, as if never written.
		e.log.Warn("unreadable events left out of the context", tools.LogSession, id, tools.LogErr, unreadable)
	}
	e.attachFiles(ctx, t.messages)
	text, requestID, author := readInputs(inputs)
	t.requestID, t.author = requestID, author
	t.tools = map[string]*tools.Tool{}
	offered, ask := agent.toolsFor(text)
	system, extra := agent.systemFor(text)
	t.system = system
	for _, tool := range extra {
		if _, dup := t.tools[tool.Name]; !dup && !slices.ContainsFunc(offered, func(o *tools.Tool) bool { return o.Name == tool.Name }) {
			offered = append(offered, tool)
		}
	}
	for _, tool := range offered {
		t.tools[tool.Name] = tool
		t.specs = append(t.specs, ToolSpec{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema()})
	}
	if ask {
		t.ask = e.askTool
		t.specs = append(t.specs, ToolSpec{Name: AskTool, Description: t.ask.Description, InputSchema: t.ask.InputSchema()})
	}
	return t, nil
}

// historyWith is the log after seq after, read before a commit, followed
// by the events the commit appended, when nothing came between them; else
// the log after after read again.
func historyWith(ctx context.Context, st Store, id string, after int64, before, appended []Event) ([]Event, error) {
	last := after
	if n := len(before); n > 0 {
		last = before[n-1].Seq
	}
	if len(appended) > 0 && appended[0].Seq == last+1 {
		return append(before, appended...), nil
	}
	history, err := st.Events(ctx, id, after, 0)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return history, nil
}

// loop runs model rounds until the model answers without tools or the
// iteration cap is reached. An error means the turn stopped abnormally.
func (e *Engine) loop(ctx context.Context, t *turn) (Outcome, error) {
	wctx := context.WithoutCancel(ctx)
	max := t.agent.MaxToolIterations
	if max <= 0 {
		max = e.maxIterations
	}
	t.maxRounds = max
	if err := e.resumeAnswered(ctx, t); err != nil {
		return "", err
	}
	if t.question != nil {
		return OutcomeQuestion, nil // the server asked again
	}
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if err := e.allowSpend(ctx, t); err != nil {
			return "", err
		}
		live := e.live(t)
		t.onDelta = nil
		if live != nil {
			t.onDelta = live.add
		}
		resp, err := e.callModel(ctx, t)
		// Watchers get the round's last words before its agent.message
		// is committed.
		live.flush()
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", err
		}
		e.count("model_calls")
		t.usage = t.usage.Add(resp.Usage)
		if err := e.recordSpend(ctx, t, resp.Usage); err != nil {
			return "", fmt.Errorf("record spend: %w", err)
		}
		calls, err := e.recordResponse(wctx, t, resp)
		if err != nil {
			return "", err
		}
		if len(calls) == 0 {
			return OutcomeCompleted, nil
		}
		results, err := e.runCalls(ctx, t, calls)
		if err != nil {
			return "", err
		}
		t.messages = append(t.messages, Message{Role: RoleUser, ToolResults: results})
		t.rounds++
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if t.question != nil {
			return OutcomeQuestion, nil
		}
		if t.rounds >= max {
			return OutcomeMaxIterations, nil
		}
	}
}

// recordResponse commits the model's text and tool calls as one unit and
// returns the calls as recorded: each under an id brain mints, unique in
// the session, with the provider's id kept for the model's context.
func (e *Engine) recordResponse(ctx context.Context, t *turn, resp ModelResponse) ([]ToolCall, error) {
	resp.Text = e.scrub.String(resp.Text)
	var ps []Payload
	if resp.Text != "" {
		ps = append(ps, AgentMessage{Text: resp.Text})
	}
	calls := make([]ToolCall, len(resp.ToolCalls))
	shown := make([]ToolCall, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		if len(c.Input) == 0 {
			c.Input = json.RawMessage(`{}`)
		}
		c.ProviderID, c.ID = c.ID, e.newID("call")
		calls[i], shown[i] = c, c.forModel()
		// Arguments that are not JSON are kept as text (see NewEvent).
		ps = append(ps, c)
	}
	evs, err := e.events(t.id, ps...)
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		if _, err := e.commit(ctx, Commit{SessionID: t.session.ID, Events: evs}); err != nil {
			return nil, fmt.Errorf("record model response: %w", err)
		}
		t.message = evs[0].ID
	}
	t.model = resp.Model
	t.messages = append(t.messages, Message{Role: RoleAssistant, Text: resp.Text, ToolCalls: shown})
	return calls, nil
}

// endTurn records a turn that ended normally or was cancelled on purpose;
// a cancel drops the queued input, with a session.error for each.
func (e *Engine) endTurn(ctx context.Context, t *turn, outcome Outcome, cause error) error {
	var dropped []Event
	if errors.Is(cause, errCancelled) {
		outcome = OutcomeCancelled
		var err error
		if dropped, err = e.pendingInputs(ctx, t.session); err != nil {
			return err
		}
	}
	if outcome == "" {
		outcome = OutcomeCancelled
	}
	next := StatusIdle
	if outcome == OutcomeQuestion {
		next = StatusAwaitingInput
	}
	ps := droppedErrors(dropped, notRunCancelled)
	ps = append(ps,
		TurnCompleted{Outcome: outcome, Rounds: t.rounds, Usage: t.usage},
		SessionStatus{Status: next, Reason: turnEndReason(outcome)})
	evs, err := e.events(t.id, ps...)
	if err != nil {
		return err
	}
	_, err = e.commit(ctx, Commit{
		SessionID: t.session.ID,
		Update: func(s *Session) error {
			s.Status = StatusIdle
			if outcome == OutcomeQuestion && s.OpenQuestion() != nil {
				s.Status = StatusAwaitingInput
			} else {
				s.Question = nil // a cancelled turn's question is closed with it
			}
			s.Checkpoint = s.LastSeq + int64(len(dropped)) + 1 // the turn.completed event
			if len(dropped) > 0 {
				s.InputCursor = dropped[len(dropped)-1].Seq
			}
			return nil
		},
		Events: evs,
	})
	if err == nil {
		e.observeTurnEnd(t, outcome, "")
	}
	return err
}

// failTurn records a turn stopped by a provider failure, an internal error
// or shutdown: session.error for the turn's input and for each queued
// input it cancels, then interrupted (transient) or failed (permanent).
func (e *Engine) failTurn(ctx context.Context, t *turn, err error, cause error) {
	log := e.log.With(tools.LogSession, t.session.ID, tools.LogTurn, t.id)
	if errors.Is(cause, errCancelled) || errors.Is(cause, errInterrupted) {
		if err := e.endTurn(ctx, t, OutcomeCancelled, cause); err != nil {
			log.Error("end cancelled turn", tools.LogErr, err)
		}
		return
	}
	status, code, msg := StatusInterrupted, CodeInternal, "internal error; "+resumeHint
	var (
		pe *ProviderError
		bs *BudgetStop
	)
	switch {
	case errors.Is(cause, errShutdown):
		code, msg = CodeInterrupted, "brain shut down while this turn was running; "+resumeHint
	case errors.As(err, &bs):
		// Interrupted, not failed: resume with retry goes on after a raise.
		code, msg = CodeBudgetExceeded, bs.Message
	case errors.As(err, &pe):
		// Providers echo what they were sent, the key included.
		code, msg = pe.Code, e.scrub.String(pe.Error())
		if !pe.Transient {
			status = StatusFailed
		}
	default:
		log.Error("turn failed", tools.LogErr, e.scrub.String(err.Error()))
	}
	e.count("turns_" + string(status))
	if err := e.stopBroken(ctx, t.session.ID, t.id, t.inputs, status, code, msg); err != nil {
		log.Error("record failed turn", tools.LogErr, err)
		return
	}
	e.observeTurnEnd(t, OutcomeFailed, code)
}

// stopBroken records the end of a turn that cannot go on and leaves the
// session in status (interrupted or failed). Every input left unanswered
// gets a session.error: the turn's newest input the one saying why
// (code, msg), its other inputs and the queued input, which is taken off
// the queue, input_cancelled. Resume with retry queues them all again.
func (e *Engine) stopBroken(ctx context.Context, sessionID, turnID string, inputs []Event, status Status, code, msg string) error {
	s, err := e.store.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	queued, err := e.pendingInputs(ctx, s)
	if err != nil {
		return err
	}
	main := SessionError{Code: code, Message: msg}
	if n := len(inputs); n > 0 {
		main.InputID, main.Input = inputs[n-1].ID, inputExcerpt(inputs[n-1])
		inputs = inputs[:n-1]
	}
	ps := []Payload{main}
	ps = append(ps, droppedErrors(inputs, notRunStopped)...)
	ps = append(ps, droppedErrors(queued, notRunStopped)...)
	ps = append(ps, TurnCompleted{Outcome: OutcomeFailed, Code: code}, SessionStatus{Status: status, Reason: code})
	evs, err := e.events(turnID, ps...)
	if err != nil {
		return err
	}
	_, err = e.commit(ctx, Commit{
		SessionID: sessionID,
		Update: func(s *Session) error {
			s.Status, s.Question = status, nil
			if len(queued) > 0 {
				s.InputCursor = queued[len(queued)-1].Seq
			}
			return nil
		},
		Events: evs,
	})
	return err
}

// droppedErrors is an input_cancelled session.error for each input.
func droppedErrors(inputs []Event, msg string) []Payload {
	ps := make([]Payload, 0, len(inputs))
	for _, in := range inputs {
		ps = append(ps, SessionError{InputID: in.ID, Input: inputExcerpt(in), Code: CodeInputCancelled, Message: msg})
	}
	return ps
}

// inputExcerpt is the start of a user.message's text, for the errors that
// tell a person which of their messages was not answered.
func inputExcerpt(ev Event) string {
	p, err := ev.Decode()
	in, ok := p.(Input)
	if err != nil || !ok {
		return ""
	}
	text := strings.Join(strings.Fields(in.Text), " ")
	if r := []rune(text); len(r) > 120 {
		text = string(r[:120]) + "…"
	}
	return text
}

// readInputs joins the text of a turn's inputs, for conditional tools, and
// returns the request id and the author of the newest one that has one. An input that
// cannot be decoded is left out here as it is left out of the context;
// buildMessages, which reads the same events, reports it.
func readInputs(inputs []Event) (text, requestID, author string) {
	var b strings.Builder
	for _, ev := range inputs {
		p, err := ev.Decode()
		if in, ok := p.(Input); ok && err == nil {
			b.WriteString(in.Text)
			b.WriteByte('\n')
			if in.RequestID != "" {
				requestID = in.RequestID
			}
			if in.Author != "" {
				author = in.Author
			}
		}
	}
	return b.String(), requestID, author
}
