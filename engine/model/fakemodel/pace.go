package fakemodel

import (
	"bytes"
	"context"
	"net/http"
	"time"
)

// pacing makes a streamed answer arrive slowly: its text in pieces, each
// written and flushed on its own, with a wait between pieces, so a test can
// watch the first words travel on while the model is still "writing".
type pacing struct {
	runes      int
	delay      time.Duration
	pauseAfter int
	pause      <-chan struct{}
	onPiece    func(i int, text string)
}

// Slowly streams the step's text (when the client streams) in pieces of
// runes characters, flushing each and waiting delay before the next. It
// applies to Text and TextAndTools steps; non-streamed answers are
// unchanged.
func (s Step) Slowly(runes int, delay time.Duration) Step {
	p := s.pacing()
	p.runes, p.delay = max(runes, 1), delay
	return s
}

// PauseAfter makes a slow step stop after n pieces until ch is closed (or
// the request ends), so a test can look at what arrived meanwhile without
// guessing at timing.
func (s Step) PauseAfter(n int, ch <-chan struct{}) Step {
	p := s.pacing()
	p.pauseAfter, p.pause = n, ch
	return s
}

// OnPiece calls f as each piece of a slow step is flushed, with its index
// from 0; measurements take their start time from it.
func (s Step) OnPiece(f func(i int, text string)) Step {
	s.pacing().onPiece = f
	return s
}

func (s *Step) pacing() *pacing {
	if s.pace == nil {
		s.pace = &pacing{runes: 8}
	} else {
		cp := *s.pace // steps are values: never share a pace between copies
		s.pace = &cp
	}
	return s.pace
}

// pieces cuts text for p: two halves without pacing, as before.
func (p *pacing) pieces(text string) []string {
	if p == nil {
		a, b := split(text)
		return []string{a, b}
	}
	var out []string
	r := []rune(text)
	for len(r) > 0 {
		n := min(p.runes, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// flushPiece writes what buf holds, flushes it and waits before piece i+1.
// It reports false when the request ended meanwhile.
func (p *pacing) flushPiece(ctx context.Context, w http.ResponseWriter, buf *bytes.Buffer, i int, text string) bool {
	if p == nil {
		return true
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return false
	}
	buf.Reset()
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if p.onPiece != nil {
		p.onPiece(i, text)
	}
	if p.pause != nil && i+1 == p.pauseAfter {
		select {
		case <-p.pause:
		case <-ctx.Done():
			return false
		}
	}
	if p.delay > 0 {
		t := time.NewTimer(p.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
