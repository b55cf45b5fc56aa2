package engine

import "context"

// SessionUsage sums the tokens a session's model calls used, from its
// log: each turn's usage (recorded on turn.completed, the turn's
// compaction included) and each compaction made outside a turn. Turns that
// failed record no usage (their shape predates it); the metrics count
// their tokens.
func (e *Engine) SessionUsage(ctx context.Context, sessionID string) (Usage, error) {
	if _, err := e.store.Session(ctx, sessionID); err != nil {
		return Usage{}, err
	}
	evs, err := e.store.Events(ctx, sessionID, 0, 0)
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	for _, ev := range evs {
		switch ev.Type {
		case EventTurnCompleted:
			if p, err := ev.Decode(); err == nil {
				u = u.Add(p.(TurnCompleted).Usage)
			}
		case EventContextCompacted:
			if p, err := ev.Decode(); err == nil && ev.TurnID == "" {
				u = u.Add(p.(ContextCompacted).Usage)
			}
		}
	}
	return u, nil
}
