package engine

import (
	"context"
	"encoding/json"
	"fmt"
)

// recover repairs sessions that a crash left running: each gets an error
// result for every tool call that has none (its outcome is unknown), a
// session.error for the turn's input and its queued input, and status
// interrupted, so `resume` can continue it.
func (e *Engine) recover(ctx context.Context) error {
	running, err := e.store.Sessions(ctx, SessionFilter{Statuses: []Status{StatusRunning}})
	if err != nil {
		return err
	}
	for _, s := range running {
		if err := e.recoverSession(ctx, s); err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		e.log.Warn("session interrupted by a crash or kill; resume it to continue", logSession, s.ID)
	}
	return nil
}

func (e *Engine) recoverSession(ctx context.Context, s Session) error {
	evs, err := e.store.Events(ctx, s.ID, s.Checkpoint, 0)
	if err != nil {
		return err
	}
	var turnID string
	var inputs []Event
	byID := map[string]Event{}
	open := map[string]ToolCall{}
	var order []string
	for _, ev := range evs {
		switch ev.Type {
		case EventUserMessage:
			byID[ev.ID] = ev
		case EventTurnStarted:
			turnID = ev.TurnID
			var d struct {
				InputIDs []string `json:"input_ids"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			inputs = inputs[:0]
			for _, id := range d.InputIDs {
				inputs = append(inputs, byID[id])
			}
		case EventToolCall:
			var c ToolCall
			if json.Unmarshal(ev.Data, &c) == nil {
				open[c.ID] = c
				order = append(order, c.ID)
			}
		case EventToolResult:
			var d toolResultData
			if json.Unmarshal(ev.Data, &d) == nil {
				delete(open, d.CallID)
			}
		}
	}
	t := &turn{id: turnID, session: s}
	for _, id := range order {
		c, ok := open[id]
		if !ok {
			continue
		}
		out := unknown("brain stopped while %q was running; its outcome is unknown", c.Name)
		if err := e.recordResult(ctx, t, c, out); err != nil {
			return err
		}
	}
	return e.stopBroken(ctx, s.ID, turnID, inputs, StatusInterrupted, "interrupted",
		"brain stopped while this turn was running; resume to continue")
}
