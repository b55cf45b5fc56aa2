package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"brain/tools"
)

// toolOutcome is what a tool call produced, as the model will see it.
type toolOutcome struct {
	Text    string
	IsError bool
	// Unknown marks a failure after dispatch: a side effect may have happened.
	Unknown bool
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
	tool, ok := t.tools[call.Name]
	if !ok {
		return failed("unknown tool %q; the tools available are listed in this request", call.Name)
	}
	if !json.Valid(call.Input) {
		return failed("arguments are not valid JSON")
	}
	if err := tool.ValidateInput(call.Input); err != nil {
		return failed("%v", err)
	}
	if tool.NeedsApproval() {
		return failed("tool %q needs a person's approval, which this version of brain cannot record yet", call.Name)
	}
	e.count("tool_calls")

	timeout := tool.Timeout
	if timeout <= 0 {
		timeout = e.toolTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tc := tools.Call{
		Input:      call.Input,
		SessionID:  t.session.ID,
		MessageID:  t.id,
		ToolCallID: call.ID,
		Agent:      t.agent.Name,
		Progress: func(pctx context.Context, data json.RawMessage) error {
			return e.recordProgress(context.WithoutCancel(pctx), t, call, data)
		},
	}

	type answer struct {
		out json.RawMessage
		err error
	}
	// The tool runs in its own goroutine so one that ignores its context
	// cannot hold the turn past its timeout.
	ch := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- answer{err: fmt.Errorf("tool panicked: %v", p)}
			}
		}()
		out, err := tool.Run(cctx, tc)
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
			e.log.Warn("tool did not stop at its deadline; abandoning it", logSession, t.session.ID, logTool, call.Name)
		}
	}
	if err := cctx.Err(); err != nil && (a.err != nil || a.out == nil) {
		if ctx.Err() != nil {
			return unknown("the turn was stopped while %q ran; its outcome is unknown", call.Name)
		}
		return unknown("%q timed out after %s; its outcome is unknown", call.Name, timeout)
	}
	if a.err != nil {
		var te *tools.Error
		if errors.As(a.err, &te) {
			return toolOutcome{Text: te.Message, IsError: true, Unknown: te.UnknownOutcome}
		}
		return unknown("%v", a.err)
	}
	return e.checkOutput(tool, a.out)
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

func (e *Engine) recordResult(ctx context.Context, t *turn, call ToolCall, out toolOutcome) error {
	data, err := json.Marshal(toolResultData{
		CallID: call.ID,
		Name:   call.Name,
		Result: toolResultDoc{
			Content:        []contentPart{{Type: "text", Text: out.Text}},
			IsError:        out.IsError,
			UnknownOutcome: out.Unknown,
		},
	})
	if err != nil {
		return fmt.Errorf("encode tool result: %w", err)
	}
	_, err = e.commit(ctx, Commit{
		SessionID: t.session.ID,
		Events:    []Event{{ID: e.newID("evt"), Type: EventToolResult, TurnID: t.id, Data: data}},
	})
	if err != nil {
		return fmt.Errorf("record tool result: %w", err)
	}
	return nil
}

func (e *Engine) recordProgress(ctx context.Context, t *turn, call ToolCall, progress json.RawMessage) error {
	if !json.Valid(progress) {
		return errors.New("progress is not valid JSON")
	}
	data, _ := json.Marshal(map[string]any{"call_id": call.ID, "name": call.Name, "data": progress})
	_, err := e.commit(ctx, Commit{
		SessionID: t.session.ID,
		Events:    []Event{{ID: e.newID("evt"), Type: EventToolProgress, TurnID: t.id, Data: data}},
	})
	return err
}
