package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"brain/tools"
)

// toolOutcome is what a tool call produced, as the model will see it.
type toolOutcome struct {
	Text    string
	IsError bool
	// Unknown marks a failure after dispatch: a side effect may have happened.
	Unknown bool

	// Set by built-in behaviours; committed together with the tool.result.
	question *Question
	approval *Approval
	result   *ResultRecord
	plan     *PlanUpdated
	skill    *SkillLoaded
}

func failed(format string, args ...any) toolOutcome {
	return toolOutcome{Text: fmt.Sprintf(format, args...), IsError: true}
}

func unknown(format string, args ...any) toolOutcome {
	return toolOutcome{Text: fmt.Sprintf(format, args...), IsError: true, Unknown: true}
}

// toolGrace is how long a tool may take to return after its context ends.
const toolGrace = time.Second

// runTool validates and runs one tool call. It never returns an error: every
// failure becomes an error result the model can read. Tools are never retried.
func (e *Engine) runTool(ctx context.Context, t *turn, call ToolCall) toolOutcome {
	if call.Name == AskTool && t.ask != nil {
		q, out := e.askCall(t, call)
		if q != nil {
			out.question, t.question = q, q
		}
		return out
	}
	tool, ok := t.tools[call.Name]
	if !ok {
		return failed("unknown tool %q; the tools available are listed in this request", call.Name)
	}
	if !json.Valid(call.Input) {
		return failed("arguments are not valid JSON")
	}
	// From here on every reader (policies, preview, the stored approval,
	// the tool) sees the one canonical form of the arguments.
	input, err := tool.CanonicalInput(call.Input)
	if err != nil {
		return failed("%v", err)
	}
	call.Input = input
	if err := tool.ValidateInput(call.Input); err != nil {
		return failed("%v", err)
	}
	e.count("tool_calls")
	tc := tools.Call{
		Input:      call.Input,
		SessionID:  t.session.ID,
		MessageID:  t.message,
		ToolCallID: call.ID,
		Agent:      t.agent.Name,
		Model:      t.model,
		RequestID:  t.requestID,
		Requester:  requesterOf(t.session, t.author),
		Progress: func(pctx context.Context, data json.RawMessage) error {
			return e.recordProgress(context.WithoutCancel(pctx), t, call, data)
		},
	}
	timeout := e.timeoutOf(tool)
	if tool.NeedsApproval() || e.policyHolds(tool, call.Input) {
		return e.proposeCall(ctx, t, tool, call, tc, timeout)
	}
	run := func(ctx context.Context, resume *tools.Resume) (json.RawMessage, toolOutcome, *tools.InputRequired) {
		tc.Resume = resume
		var asked atomic.Pointer[tools.InputRequired]
		// The tool's own timeout runs in held; the ceiling here leaves
		// room for the person's answer to a request made while it waits.
		held := e.newHeld(t, call, timeout)
		raw, out := e.invoke(ctx, call.Name, timeout+e.elicitWait(), func(ctx context.Context) (json.RawMessage, error) {
			ctx, stop := held.start(ctx)
			defer stop()
			tc := tc
			tc.Elicit = held.elicit
			raw, err := tool.Run(ctx, tc)
			if ir := asInputRequired(err); ir != nil {
				asked.Store(ir)
				return json.RawMessage(`{}`), nil
			}
			return raw, err
		})
		return raw, held.outcome(out), asked.Load()
	}
	raw, out, ir := run(ctx, t.resume[call.ID])
	if ir != nil {
		return e.inputRequired(ctx, t, call, run, ir)
	}
	if out.IsError {
		return out
	}
	out = e.checkOutput(tool, raw)
	if tool.Result {
		out = e.resultOutcome(ctx, t, call, tool, out)
	}
	if call.Name == PlanTool && !out.IsError {
		out.plan = planOf(call.ID, out.Text)
	}
	if call.Name == SkillTool && !out.IsError {
		out.skill = skillOf(call.ID, out.Text)
	}
	return out
}

func (e *Engine) timeoutOf(tool *tools.Tool) time.Duration {
	if tool.Timeout > 0 {
		return tool.Timeout
	}
	return e.toolTimeout
}

// invoke runs fn with a timeout in its own goroutine, so a tool that ignores
// its context cannot hold the turn past its deadline, and turns panics and
// errors into error outcomes. Every tool's run, preview and apply comes
// through here, so this is where what a tool returns is scrubbed of
// secrets, before anything records it or the model sees it.
func (e *Engine) invoke(ctx context.Context, name string, timeout time.Duration, fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, toolOutcome) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		out json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- answer{err: fmt.Errorf("tool panicked: %v", p)}
			}
		}()
		out, err := fn(cctx)
		ch <- answer{out, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-cctx.Done():
		// Give a tool that honours its context a moment to return.
		select {
		case a = <-ch:
		case <-time.After(toolGrace):
			e.log.Warn("tool did not stop at its deadline; abandoning it", tools.LogTool, name)
		}
	}
	// A tool's own error says best what happened, even at its deadline
	// (e.g. "killed after 120s, every process confirmed stopped").
	if cr, ok := tools.AsConnectionRequired(a.err); ok {
		return nil, toolOutcome{Text: e.scrub.String(cr.Error()), IsError: true}
	}
	var te *tools.Error
	if errors.As(a.err, &te) {
		if te.Cause != "" {
			e.logCause(name, te.Cause)
		}
		return nil, toolOutcome{Text: e.scrub.String(te.Message), IsError: true, Unknown: te.UnknownOutcome}
	}
	if err := cctx.Err(); err != nil && (a.err != nil || a.out == nil) {
		if ctx.Err() != nil {
			return nil, unknown("stopped while %q ran; its outcome is unknown", name)
		}
		return nil, unknown("%q timed out after %s; its outcome is unknown", name, timeout)
	}
	if a.err != nil {
		return nil, unknown("%s", e.scrub.String(a.err.Error()))
	}
	if len(a.out) == 0 {
		return a.out, toolOutcome{}
	}
	return e.scrub.JSON(a.out), toolOutcome{}
}

// maxCauses bounds the causes remembered as logged; past it they are
// forgotten and may be logged again.
const maxCauses = 1024

// logCause logs a tool failure that its configuration causes, once per
// tool and cause: every call fails alike until an operator fixes it, and
// the model has the details in its tool result.
func (e *Engine) logCause(tool, cause string) {
	key := tool + "\x00" + cause
	e.mu.Lock()
	seen := e.causes[key]
	if !seen {
		if e.causes == nil || len(e.causes) >= maxCauses {
			e.causes = map[string]bool{}
		}
		e.causes[key] = true
	}
	e.mu.Unlock()
	if !seen {
		e.log.Warn("a tool is misconfigured; its calls fail until the config is fixed (logged once per cause)",
			tools.LogTool, tool, tools.LogCause, e.scrub.String(cause))
	}
}

// checkOutput applies the size cap and the output schema. A tool that ran
// and returned something unusable may still have had its effect, hence
// unknown outcome.
func (e *Engine) checkOutput(tool *tools.Tool, out json.RawMessage) toolOutcome {
	if len(out) == 0 {
		out = json.RawMessage(`null`)
	}
	if len(out) > e.maxOutputBytes {
		return unknown("output is %d bytes, over the %d-byte limit", len(out), e.maxOutputBytes)
	}
	if !json.Valid(out) {
		return unknown("tool returned invalid JSON")
	}
	if err := tool.ValidateOutput(out); err != nil {
		return unknown("%v", err)
	}
	return toolOutcome{Text: string(out)}
}

// recordResult commits a call's result, together with what a built-in
// behaviour opened: a question, an approval or a session result.
func (e *Engine) recordResult(ctx context.Context, t *turn, call ToolCall, out toolOutcome) error {
	c := Commit{SessionID: t.session.ID}
	// The session keeps the open question and the latest result as the
	// data of their events: doc, set below once that event is built.
	var opened Payload
	var doc json.RawMessage
	var decided []Event // an auto-approval's decision
	switch {
	case out.question != nil:
		opened = *out.question
		c.Update = func(s *Session) error { s.Question = doc; return nil }
	case out.approval != nil:
		a := out.approval
		opened = ApprovalRequested{
			ApprovalID: a.ID, Tool: a.Tool, CallID: a.CallID, Title: a.Card.Title, Facts: a.Card.Facts,
			Input: a.Input, RequestedBy: a.RequestedBy, ExpiresAt: a.ExpiresAt,
		}
		a.MessageID = t.message // what the apply's call context names
		c.NewApproval = a
		if a.Status == ApprovalApplying {
			// Auto-approved by a policy: the decision is committed with
			// the proposal, so a crash before the apply starts leaves it
			// applying, which start-up marks unconfirmed.
			var err error
			if decided, err = e.events(t.id, policyDecision(*a)); err != nil {
				return fmt.Errorf("record tool result: %w", err)
			}
			// Held before it is recorded applying, as Decide does.
			if err := e.holdApply(ctx, a.ID); err != nil {
				return fmt.Errorf("record tool result: %w", err)
			}
		}
	case out.plan != nil:
		opened = *out.plan
	case out.skill != nil:
		opened = *out.skill
	case out.result != nil:
		opened = *out.result
		c.Result = out.result
		c.Update = func(s *Session) error {
			if s.Status != StatusRunning {
				return errTurnEnded
			}
			s.Result = doc
			return nil
		}
	}
	var extra []Event
	if opened != nil {
		var err error
		if extra, err = e.events(t.id, opened); err != nil {
			return fmt.Errorf("record tool result: %w", err)
		}
		doc = extra[0].Data
	}
	res, err := e.events(t.id, ToolCallResult{CallID: call.ID, ProviderCallID: call.ProviderID, Name: call.Name, Result: textResult(out.Text, out.IsError, out.Unknown)})
	if err != nil {
		return fmt.Errorf("record tool result: %w", err)
	}
	c.Events = append(append(res, extra...), decided...)
	_, err = e.commit(ctx, c)
	if err != nil && decided != nil {
		e.releaseApply(context.WithoutCancel(ctx), out.approval.ID)
	}
	if errors.Is(err, errTurnEnded) {
		return e.recordResult(ctx, t, call, failed("%v", errTurnEnded))
	}
	if err != nil {
		return fmt.Errorf("record tool result: %w", err)
	}
	if decided != nil {
		e.count("approvals_" + DecisionApprove)
		e.startApply(*out.approval)
	}
	return nil
}

func (e *Engine) recordProgress(ctx context.Context, t *turn, call ToolCall, progress json.RawMessage) error {
	if !json.Valid(progress) {
		return errors.New("progress is not valid JSON")
	}
	evs, err := e.events(t.id, ToolProgress{CallID: call.ID, Name: call.Name, Data: e.scrub.JSON(progress)})
	if err != nil {
		return err
	}
	_, err = e.commit(ctx, Commit{SessionID: t.session.ID, Events: evs})
	return err
}
