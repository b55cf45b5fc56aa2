package engine

import "time"

// Observer is told when turns start and end and when tool calls return,
// for metrics and logs kept outside the engine. The engine calls it
// synchronously from the turn's goroutine, after the step is recorded: it
// must be quick and must not call back into the engine. Config.Observer
// nil observes nothing.
type Observer interface {
	TurnStarted(TurnInfo)
	TurnEnded(TurnInfo, TurnEnd)
	ToolReturned(TurnInfo, ToolReturn)
}

// TurnInfo names a turn.
type TurnInfo struct {
	SessionID string
	TurnID    string
	Agent     string
	Origin    Origin
	Inputs    int // inputs the turn took
}

// TurnEnd is how a turn ended.
type TurnEnd struct {
	Outcome  Outcome // OutcomeCompleted, OutcomeQuestion ... OutcomeFailed
	Code     string  // for OutcomeFailed: the session.error code
	Duration time.Duration
	Rounds   int
	Usage    Usage
}

// ToolReturn is one tool call's end.
type ToolReturn struct {
	Tool   string
	CallID string
	// Offered is false when the model named a tool this turn did not offer
	// (Tool is then whatever the model wrote).
	Offered  bool
	Duration time.Duration
	IsError  bool
	// Unknown marks a failure after dispatch (the side effect may have
	// happened).
	Unknown bool
	// Text is what the model is told; for errors, the reason.
	Text string
}

func (t *turn) info() TurnInfo {
	return TurnInfo{SessionID: t.session.ID, TurnID: t.id, Agent: t.agent.Name, Origin: t.session.Origin, Inputs: len(t.inputs)}
}

// The observe methods read the clock only when there is an observer, so
// an engine without one makes the same clock calls as before it existed.

func (e *Engine) observeTurnStart(t *turn) {
	if e.observer == nil {
		return
	}
	t.started = e.now()
	e.observer.TurnStarted(t.info())
}

func (e *Engine) observeTurnEnd(t *turn, outcome Outcome, code string) {
	if e.observer == nil {
		return
	}
	e.observer.TurnEnded(t.info(), TurnEnd{Outcome: outcome, Code: code, Duration: e.now().Sub(t.started), Rounds: t.rounds, Usage: t.usage})
}

// observeTool starts timing a tool call; the returned func reports its end.
func (e *Engine) observeTool(t *turn, call ToolCall) func(toolOutcome) {
	if e.observer == nil {
		return func(toolOutcome) {}
	}
	started := e.now()
	return func(out toolOutcome) {
		_, offered := t.tools[call.Name]
		offered = offered || call.Name == AskTool && t.ask != nil
		e.observer.ToolReturned(t.info(), ToolReturn{Tool: call.Name, CallID: call.ID, Offered: offered,
			Duration: e.now().Sub(started), IsError: out.IsError, Unknown: out.Unknown, Text: out.Text})
	}
}
