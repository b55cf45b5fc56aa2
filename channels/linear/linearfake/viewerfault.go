package linearfake

// FailViewer makes the next n viewer queries answer f (a revoked token, an
// outage), leaving every other request alone.
func (s *Server) FailViewer(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.viewerFaults = append(s.viewerFaults, &fault{Fault: f, n: n})
}

func (s *Server) nextViewerFault() *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.viewerFaults) > 0 {
		f := s.viewerFaults[0]
		if f.n <= 0 {
			s.viewerFaults = s.viewerFaults[1:]
			continue
		}
		f.n--
		out := f.Fault
		return &out
	}
	return nil
}
