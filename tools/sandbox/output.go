package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"brain/internal/egress"
	"brain/tools"
)

// stream keeps the head and the tail of one output stream, at most limit
// bytes in all, however much the command writes.
type stream struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte
	hcap  int
	tcap  int
	total int64
}

func newStream(limit int) *stream {
	return &stream{hcap: limit / 2, tcap: limit - limit/2}
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	s.total += int64(n)
	if room := s.hcap - len(s.head); room > 0 {
		k := min(room, len(p))
		s.head = append(s.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	s.tail = append(s.tail, p...)
	if len(s.tail) > 2*s.tcap {
		// Compact so memory stays bounded by the limit.
		s.tail = append([]byte(nil), s.tail[len(s.tail)-s.tcap:]...)
	}
	return n, nil
}

// text returns the stream cut to at most budget bytes (plus an omission
// marker) and whether anything was left out. budget must not exceed the
// stream's limit.
func (s *stream) text(budget int) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tail := s.tail
	if len(tail) > s.tcap {
		tail = tail[len(tail)-s.tcap:]
	}
	kept := int64(len(s.head) + len(tail))
	if s.total <= int64(budget) && kept == s.total {
		return strings.ToValidUTF8(string(s.head)+string(tail), "\uFFFD"), false
	}
	hb := budget / 2
	tb := budget - hb
	var h, t []byte
	if kept == s.total {
		all := append(append([]byte(nil), s.head...), tail...)
		h, t = all[:hb], all[len(all)-tb:]
	} else {
		h, t = s.head[:min(hb, len(s.head))], tail[len(tail)-min(tb, len(tail)):]
	}
	h, t = trimRuneEnd(h), trimRuneStart(t)
	omitted := s.total - int64(len(h)) - int64(len(t))
	return strings.ToValidUTF8(string(h), "\uFFFD") +
		fmt.Sprintf("\n[... %d bytes omitted ...]\n", omitted) +
		strings.ToValidUTF8(string(t), "\uFFFD"), true
}

func (s *stream) size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// trimRuneEnd drops a rune cut in two at the end of b.
func trimRuneEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// trimRuneStart drops the continuation bytes of a rune cut at the start.
func trimRuneStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}

// result is what the model reads after a command ran.
type result struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
	Notice    string `json:"notice,omitempty"`
	// Egress is the session's proxy counts in proxy mode, with the hosts
	// refused for the first time during this command.
	Egress *egress.Report `json:"egress,omitempty"`
}

func (r *result) set(stdout, stderr string, truncated bool) {
	r.Stdout, r.Stderr, r.Truncated = stdout, stderr, truncated
}

// partial is the output of a command that was stopped, for an error
// message: it has no exit status.
type partial struct {
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
}

func (r *partial) set(stdout, stderr string, truncated bool) {
	r.Stdout, r.Stderr, r.Truncated = stdout, stderr, truncated
}

// outputs is a document holding a command's output.
type outputs interface {
	set(stdout, stderr string, truncated bool)
}

// encode marshals without HTML escaping, which would turn each '<' of a
// command's output into six bytes.
func encode(v any) []byte {
	b, _ := tools.MarshalUnescaped(v) // strings, ints and bools always encode
	return b
}

// fit fills v's stdout and stderr so that v encodes to at most limit bytes,
// keeping the head and tail of each stream and sharing the room fairly:
// a short stream keeps all of itself, the longer one gets the rest. The
// room is in raw bytes, and escaping (a control byte takes six) makes the
// JSON longer, so it searches for the largest room that fits.
func fit(v outputs, out, errs *stream, limit int) []byte {
	build := func(budget int) []byte {
		bo, be := share(budget, out.size(), errs.size())
		so, to := out.text(bo)
		se, te := errs.text(be)
		v.set(so, se, to || te)
		return encode(v)
	}
	if b := build(limit); len(b) <= limit {
		return b
	}
	lo, hi := 0, limit // build(lo) fits, or lo is 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(build(mid)) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return build(lo)
}

// share splits budget between two streams of sizes a and b.
func share(budget int, a, b int64) (int, int) {
	if a+b <= int64(budget) {
		return int(a), int(b)
	}
	half := int64(budget / 2)
	switch {
	case a <= half:
		return int(a), budget - int(a)
	case b <= half:
		return budget - int(b), int(b)
	}
	return int(half), budget - int(half)
}
