package engine

import (
	"context"
)

// Parallel tool calls. When a model asks for several calls in one round,
// the independent ones run at the same time, at most maxParallel at once.
// A call is independent when it is a plain tool that runs (tools.Definition
// Run) and is not the result tool or the plan tool: those only read or
// write things outside the session, and the model asking for them
// together, before seeing any result, is the model saying their order
// does not matter. The calls that change the session or wait for a person
// keep their sequential semantics: ask, approval tools (preview and
// proposal), the result tool and plan each run alone, in their place, after
// every call before them has finished and before any after them starts.
// Unknown tools and invalid arguments fail at once either way.
//
// Crash safety is as before: every tool.call is recorded before any call
// is dispatched, and results are recorded in the model's order, each as
// soon as it and the calls before it are done; a crash in between leaves
// calls without results, which recovery marks unknown_outcome.

// independent reports whether call may run beside the round's other
// independent calls.
func (t *turn) independent(call ToolCall) bool {
	if call.Name == AskTool || call.Name == PlanTool {
		return false
	}
	tool, ok := t.tools[call.Name]
	return ok && !tool.NeedsApproval() && tool.Hold == nil && !tool.Result
}

// runCalls runs a round's calls and records their results in order. An
// error means a result could not be recorded.
func (e *Engine) runCalls(ctx context.Context, t *turn, calls []ToolCall) ([]ToolResult, error) {
	wctx := context.WithoutCancel(ctx)
	results := make([]ToolResult, 0, len(calls))
	record := func(call ToolCall, o ran) error {
		if o.observed != nil {
			o.observed(o.out)
		}
		if err := e.recordResult(wctx, t, call, o.out); err != nil {
			return err
		}
		results = append(results, ToolResult{CallID: call.ModelID(), Name: call.Name, Content: o.out.Text, IsError: o.out.IsError})
		return nil
	}
	for i := 0; i < len(calls); {
		j := i + 1
		if t.independent(calls[i]) && e.maxParallel > 1 {
			for j < len(calls) && t.independent(calls[j]) {
				j++
			}
		}
		if j == i+1 {
			// Alone: run, then record, before the next call starts.
			if err := record(calls[i], e.runOne(ctx, t, calls[i])); err != nil {
				return nil, err
			}
			i = j
			continue
		}
		outs := e.runBatch(ctx, t, calls[i:j])
		for k, call := range calls[i:j] {
			if err := record(call, <-outs[k]); err != nil {
				// Let the batch's other calls end before the turn stops.
				for _, ch := range outs[k+1:] {
					<-ch
				}
				return nil, err
			}
		}
		i = j
	}
	return results, nil
}

// ran is one call's outcome and the Observer's report of it.
type ran struct {
	out      toolOutcome
	observed func(toolOutcome)
}

// notRun is the outcome of a call the turn's stop kept from starting.
var notRun = toolOutcome{Text: "not run: the turn was stopped before this call", IsError: true}

// runOne runs one call unless the turn has been stopped.
func (e *Engine) runOne(ctx context.Context, t *turn, call ToolCall) ran {
	if ctx.Err() != nil {
		return ran{out: notRun}
	}
	observed := e.observeTool(t, call)
	return ran{e.runTool(ctx, t, call), observed}
}

// runBatch starts independent calls, at most maxParallel at once, and
// returns a channel per call that delivers its outcome. Calls start in
// the model's order as slots free up.
func (e *Engine) runBatch(ctx context.Context, t *turn, calls []ToolCall) []chan ran {
	outs := make([]chan ran, len(calls))
	for i := range outs {
		outs[i] = make(chan ran, 1)
	}
	go func() {
		slots := make(chan struct{}, e.maxParallel)
		for i, call := range calls {
			slots <- struct{}{}
			go func() {
				defer func() { <-slots }()
				outs[i] <- e.runOne(ctx, t, call)
			}()
		}
	}()
	return outs
}
