package engine

import "context"

// Spend governs what model calls may cost: the engine asks it before each
// model call and tells it what each call used. Budgets live outside the
// engine (bot/governance); the engine only stops the turn when told to.
// Config.Spend nil spends without limit.
type Spend interface {
	// Allow is asked before each model call of a turn. A *BudgetStop
	// stops the turn: session.error with code CodeBudgetExceeded and the
	// stop's message, status interrupted, so resume (with retry) goes on
	// once the budget is raised or resets. Notice, when not empty, is
	// posted to the session once, before the call (an agent.message).
	Allow(ctx context.Context, call SpendCall) (notice string, err error)
	// Spent records what one model call used.
	Spent(ctx context.Context, call SpendCall, u Usage) error
}

// SpendCall names a model call for Spend.
type SpendCall struct {
	Session Session
	TurnID  string
	Agent   string
	// Model is the model the call goes to.
	Model string
}

// CodeBudgetExceeded is the session.error code of a turn a budget stopped.
const CodeBudgetExceeded = "budget_exceeded"

// BudgetStop is Spend.Allow's refusal: Message names the budget, when it
// resets and who can raise it.
type BudgetStop struct{ Message string }

func (b *BudgetStop) Error() string { return b.Message }

// allowSpend asks Spend before a model call; it records the notice Spend
// gives, if any.
func (e *Engine) allowSpend(ctx context.Context, t *turn) error {
	if e.spend == nil {
		return nil
	}
	notice, err := e.spend.Allow(ctx, e.spendCall(t))
	if err != nil {
		return err
	}
	if notice == "" {
		return nil
	}
	evs, err := e.events(t.id, AgentMessage{Text: notice})
	if err != nil {
		return err
	}
	if _, err := e.commit(context.WithoutCancel(ctx), Commit{SessionID: t.session.ID, Events: evs}); err != nil {
		return err
	}
	return nil
}

// recordSpend tells Spend what a model call used. A failure to record is
// returned: spend that is not counted would let a budget be overshot.
func (e *Engine) recordSpend(ctx context.Context, t *turn, u Usage) error {
	if e.spend == nil {
		return nil
	}
	return e.spend.Spent(context.WithoutCancel(ctx), e.spendCall(t), u)
}

func (e *Engine) spendCall(t *turn) SpendCall {
	return SpendCall{Session: t.session, TurnID: t.id, Agent: t.agent.Name, Model: t.model}
}
