package engine

import (
	"context"
	"errors"
	"fmt"

	"brain/tools"
)

// CodeContextTooLarge is the error of a turn whose request cannot be made
// to fit the model's context window, even after compaction.
const CodeContextTooLarge = "context_too_large"

// request is the model request of the turn's next round.
func (t *turn) request() ModelRequest {
	return ModelRequest{
		System:    t.system,
		Messages:  t.messages,
		Tools:     t.specs,
		SessionID: t.session.ID,
		TurnID:    t.id,
		OnDelta:   t.onDelta,
	}
}

// callModel makes the turn's next model call within the context budget:
// compacting first when the request would not fit, and compacting once
// more and retrying once when the provider refuses it as too long. A
// turn writes at most one summary; shortening tool results needs no
// model call and may happen in any round.
func (e *Engine) callModel(ctx context.Context, t *turn) (ModelResponse, error) {
	name := t.agent.Name
	budget := t.agent.inputBudget()
	req := t.request()
	est := e.sizes.estimate(name, req)
	if t.firstSize == 0 {
		t.firstSize = est
	}
	if budget > 0 && est > budget {
		if _, err := e.compactTurn(ctx, t, CompactBudget, t.compactTarget(est, budget)); err != nil {
			return ModelResponse{}, err
		}
		req = t.request()
		if est = e.sizes.estimate(name, req); est > budget {
			return ModelResponse{}, e.tooLarge(t, est, budget)
		}
	}
	raw := rawEstimate(req)
	resp, err := t.agent.Model.Generate(ctx, req)
	var pe *ProviderError
	if err != nil && errors.As(err, &pe) && pe.ContextExceeded && ctx.Err() == nil {
		// The estimate was wrong for this model: trust it less from now on.
		est := e.sizes.estimate(name, req)
		e.sizes.grow(name)
		target := int(float64(est) * compactTarget)
		if budget > 0 {
			target = min(target, int(float64(budget)*compactTarget))
		}
		changed, cerr := e.compactTurn(ctx, t, CompactProvider, target)
		if cerr != nil {
			return ModelResponse{}, cerr
		}
		if !changed {
			why := "nothing in the history could be compacted"
			if t.summarized {
				why = "the turn has already summarised its history once"
			}
			return ModelResponse{}, e.refused(t, pe, why)
		}
		req = t.request()
		raw = rawEstimate(req)
		resp, err = t.agent.Model.Generate(ctx, req)
		if err != nil && errors.As(err, &pe) && pe.ContextExceeded {
			return ModelResponse{}, e.refused(t, pe, "it still did after compaction and one retry")
		}
	}
	if err == nil {
		e.sizes.calibrate(name, raw, resp.Usage.InputTokens)
	}
	return resp, err
}

// compactTarget is the size a turn's compaction aims for: 60% of the
// budget, less the room the turn's remaining rounds will take if they
// grow the context as its rounds so far did (a turn summarises only once),
// but never under a quarter of the budget.
func (t *turn) compactTarget(est, budget int) int {
	target := int(float64(budget) * compactTarget)
	if t.rounds > 0 && t.maxRounds > t.rounds {
		growth := max(est-t.firstSize, 0) / t.rounds
		target = min(target, budget-growth*(t.maxRounds-t.rounds))
	}
	return max(target, budget/4)
}

// compactTurn compacts the turn's session towards target and rebuilds the
// turn's context from the log; changed reports whether anything was
// compacted.
func (e *Engine) compactTurn(ctx context.Context, t *turn, reason string, target int) (changed bool, err error) {
	res, err := e.compact(ctx, compaction{
		sessionID: t.session.ID, turnID: t.id, agent: t.agent, system: t.system, specs: t.specs,
		reason: reason, target: target, summarize: !t.summarized,
	})
	t.usage = t.usage.Add(res.usage)
	if err != nil {
		return false, err
	}
	if res.event == nil {
		return false, nil
	}
	if res.event.Summary != "" {
		t.summarized = true
	}
	history, err := e.store.Events(context.WithoutCancel(ctx), t.session.ID, res.contextSeq, 0)
	if err != nil {
		return true, fmt.Errorf("read history: %w", err)
	}
	msgs, unreadable := buildMessages(history)
	if unreadable != nil {
		e.log.Warn("unreadable events left out of the context", tools.LogSession, t.session.ID, tools.LogErr, unreadable)
	}
	e.attachFiles(ctx, msgs)
	t.messages = msgs
	return true, nil
}

// tooLarge is the error of a request that does not fit even compacted.
func (e *Engine) tooLarge(t *turn, est, budget int) error {
	input := 0
	for _, ev := range t.inputs {
		if p, err := ev.Decode(); err == nil {
			if in, ok := p.(Input); ok {
				input += len(inputMessageText(in))
			}
		}
	}
	inputTokens := int(float64(input/3+1) * e.sizes.get(t.agent.Name))
	return &ProviderError{Code: CodeContextTooLarge, Message: fmt.Sprintf(
		"the request needs about %d tokens, over the %d the context window allows (%d tokens, %d kept for the answer), even after compaction; the newest input alone is about %d tokens. Send a shorter message, or give the model a larger context_window",
		est, budget, t.agent.ContextWindow, t.agent.ContextWindow-budget, inputTokens)}
}

// refused is the error of a request the provider refused as too long
// although it was compacted.
func (e *Engine) refused(t *turn, pe *ProviderError, why string) error {
	est := e.sizes.estimate(t.agent.Name, t.request())
	return &ProviderError{Status: pe.Status, Code: CodeContextTooLarge, Message: fmt.Sprintf(
		"the model's provider refused the request (about %d tokens) as longer than its context window, and %s: %s",
		est, why, pe.Message)}
}

// Compact compacts a session's context now (POST /v1/sessions/{id}/compact):
// large tool results are shortened and the older part of the history is
// summarised, aiming at half its size. It refuses while a turn runs, and
// when there is nothing to compact.
func (e *Engine) Compact(ctx context.Context, sessionID string) (ContextCompacted, error) {
	s, err := e.store.Session(ctx, sessionID)
	if err != nil {
		return ContextCompacted{}, err
	}
	notRunning := func(s *Session) error {
		if s.Status == StatusRunning {
			return Errorf(CodeConflict, "a turn is running; compact after it ends")
		}
		return nil
	}
	if err := notRunning(&s); err != nil {
		return ContextCompacted{}, err
	}
	agent, ok := e.agents[s.Agent]
	if !ok {
		return ContextCompacted{}, Errorf(CodeConflict, "agent %q is not configured", s.Agent)
	}
	var specs []ToolSpec
	for _, tool := range agent.Tools {
		specs = append(specs, ToolSpec{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema()})
	}
	evs, err := e.store.Events(ctx, sessionID, s.ContextSeq, 0)
	if err != nil {
		return ContextCompacted{}, err
	}
	msgs, _ := buildMessages(evs)
	size := e.sizes.estimate(agent.Name, ModelRequest{System: agent.Instructions, Messages: msgs, Tools: specs})
	target := size / 2
	if b := agent.inputBudget(); b > 0 {
		target = min(target, int(float64(b)*compactTarget))
	}
	res, err := e.compact(ctx, compaction{
		sessionID: sessionID, agent: agent, specs: specs, reason: CompactAPI,
		target: target, summarize: true, guard: notRunning,
	})
	if err != nil {
		return ContextCompacted{}, err
	}
	if res.event == nil {
		return ContextCompacted{}, Errorf(CodeConflict, "nothing to compact: the history has no older rounds or large tool results")
	}
	return *res.event, nil
}
