package engine

import "context"

// SessionUsage sums the tokens a session's model calls used: each turn's
// usage (recorded on turn.completed, the turn's compaction included) and
// each compaction made outside a turn, as the store keeps their running
// total on the session with each commit (store.UsageOf). Turns that failed
// record no usage (their shape predates it); the metrics count their
// tokens.
func (e *Engine) SessionUsage(ctx context.Context, sessionID string) (Usage, error) {
	s, err := e.store.Session(ctx, sessionID)
	if err != nil {
		return Usage{}, err
	}
	return s.UsageTotal, nil
}
