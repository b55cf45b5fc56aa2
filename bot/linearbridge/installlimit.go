package linearbridge

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Install starts write a state row each; unauthenticated, they are
// bounded so a flood writes a bounded number of rows: at most
// maxStartsPerAddr live starts per client address and maxStarts in all
// (live = younger than stateTTL), refused with 429 past that. Expired
// rows are deleted by the store as new ones are saved.
const (
	maxStartsPerAddr = 10
	maxStarts        = 1000
)

// installStarts counts the live install starts by client address.
type installStarts struct {
	mu     sync.Mutex
	byAddr map[string][]time.Time // expiries, oldest first
	total  int
}

// allow records a start from r's address at now, or reports false when
// that address or everyone has too many live ones.
func (s *installStarts) allow(r *http.Request, now time.Time) bool {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAddr == nil {
		s.byAddr = map[string][]time.Time{}
	}
	for a, exp := range s.byAddr {
		live := exp[:0]
		for _, e := range exp {
			if now.Before(e) {
				live = append(live, e)
			}
		}
		s.total -= len(exp) - len(live)
		if len(live) == 0 {
			delete(s.byAddr, a)
		} else {
			s.byAddr[a] = live
		}
	}
	if len(s.byAddr[addr]) >= maxStartsPerAddr || s.total >= maxStarts {
		return false
	}
	s.byAddr[addr] = append(s.byAddr[addr], now.Add(stateTTL))
	s.total++
	return true
}
