package mcp

// Disconnected returns the ids of the configured servers that have no live
// connection now (they failed to connect, or were lost and are being
// retried), in config order. Asking also nudges each of them to try again,
// no sooner than reconnectGap after its last failed attempt, so a server
// that comes up is noticed at the next readiness probe rather than at the
// refresh timer.
func (b *Bridge) Disconnected() []string {
	var out []string
	for _, s := range b.servers {
		if s.current() == nil {
			out = append(out, s.cfg.ID)
			s.poke()
		}
	}
	return out
}
