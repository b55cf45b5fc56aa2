package mcp

// ChildPID returns the pid (and process group id) of the stdio child of
// the server id, or 0 when it is not connected.
func ChildPID(b *Bridge, id string) int {
	for _, s := range b.servers {
		if s.cfg.ID == id {
			if c := s.current(); c != nil && c.proc != nil {
				return c.proc.pid
			}
		}
	}
	return 0
}

// Drop marks the connection of the server id lost and pokes it, so that
// it reconnects as after a dropped connection.
func Drop(b *Bridge, id string) {
	for _, s := range b.servers {
		if s.cfg.ID == id {
			if c := s.current(); c != nil {
				c.lost.Store(true)
			}
			s.poke()
		}
	}
}
