package slackfake

import "time"

// Faults: answers the fake gives on demand instead of doing the call.

// RateLimit makes the next n calls of method answer HTTP 429 with a
// Retry-After of retryAfter, rounded up to whole seconds (0 is allowed).
func (s *Server) RateLimit(method string, n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], &fault{n: n, retryAfter: retryAfter})
}

// Fail makes the next n calls of method answer {"ok":false,"error":code};
// n < 0 fails every call from now on.
func (s *Server) Fail(method string, n int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], &fault{n: n, code: code})
}

// FailAfter makes the next n calls of method take effect and then answer
// {"ok":false,"error":code}, as when Slack did the work and its answer was
// lost: the client must find what it made when it tries again.
func (s *Server) FailAfter(method string, n int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], &fault{n: n, code: code, after: true})
}

func (s *Server) takeFaultLocked(method string) *fault {
	fs := s.faults[method]
	for len(fs) > 0 && fs[0].n == 0 {
		fs = fs[1:]
	}
	s.faults[method] = fs
	if len(fs) == 0 {
		return nil
	}
	if fs[0].n > 0 {
		fs[0].n--
	}
	return fs[0]
}
