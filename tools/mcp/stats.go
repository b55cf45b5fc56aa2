package mcp

import "sync/atomic"

// ServerStats counts one server's tools/call requests since Connect.
type ServerStats struct {
	ID string
	// Calls counts tools/call requests sent (or attempted) to the server.
	Calls int64
	// Errors counts those that did not succeed: the tool reported an
	// error, the server answered with one, or no answer came.
	Errors int64
	// Elicitations counts the server's requests for input from a person
	// (elicitation/create during a call, or a multi round-trip request's
	// input request), answered or declined.
	Elicitations int64
}

// counters are a server's ServerStats, updated as calls end.
type counters struct {
	calls, errors, elicitations atomic.Int64
}

// Stats returns each configured server's counts, in config order.
func (b *Bridge) Stats() []ServerStats {
	out := make([]ServerStats, 0, len(b.servers))
	for _, s := range b.servers {
		out = append(out, ServerStats{ID: s.cfg.ID, Calls: s.stats.calls.Load(), Errors: s.stats.errors.Load(), Elicitations: s.stats.elicitations.Load()})
	}
	return out
}
