package engine

import (
	"strings"
	"sync"
	"unicode/utf8"

	"brain/tools"
)

// EventAgentMessageDelta is the type a piece of streamed text goes by on
// the API's event stream. It is never an event of the log: deltas are not
// stored, and the final agent.message is recorded as before.
const EventAgentMessageDelta = "agent.message.delta"

// Delta is a piece of the agent's text as the model writes it. Concatenated
// in order, the deltas of one round are that round's agent.message text
// (scrubbed the same way).
type Delta struct {
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"`
	// Round is the model call within the turn, from 0: a turn's text may
	// come in several agent.message events, one per round.
	Round int    `json:"round"`
	Text  string `json:"text"`
}

// maxFeedBytes bounds the text a DeltaFeed holds for a reader that does
// not keep up. Past it deltas are dropped: the final agent.message still
// carries the whole text, so nothing is lost for good.
const maxFeedBytes = 1 << 20

// DeltaFeed collects the text deltas of one session (or of every session)
// from the moment it is made. The engine never waits for a feed: deltas
// accumulate until Next or Take reads them, consecutive ones of the same
// round merged. The deltas broker is apart from the hub's on purpose:
// commits wake watchers (and, across replicas, may be fed from
// elsewhere), while deltas exist only in this process, for whoever is
// watching now.
type DeltaFeed = Feed[Delta]

func newDeltas() *Broker[Delta] { return NewBroker(addDelta) }

// addDelta folds x into a feed's unread deltas: merged into the last one
// of the same round, dropped past maxFeedBytes.
func addDelta(unread []Delta, x Delta) []Delta {
	size := len(x.Text)
	for _, d := range unread {
		size += len(d.Text)
	}
	if size > maxFeedBytes {
		return unread
	}
	if n := len(unread); n > 0 && unread[n-1].SessionID == x.SessionID && unread[n-1].TurnID == x.TurnID && unread[n-1].Round == x.Round {
		unread[n-1].Text += x.Text
		return unread
	}
	return append(unread, x)
}

// WatchDeltas starts a feed of the session's deltas; sessionID "" feeds
// every session's. Close it when done.
func (e *Engine) WatchDeltas(sessionID string) *DeltaFeed {
	return e.deltas.Subscribe(func(d Delta) bool { return sessionID == "" || d.SessionID == sessionID })
}

// liveText scrubs one round's streamed text before it leaves the engine. A
// secret may arrive split over several deltas, so an end that could start
// a secret is held back until more text (or the round's end) shows whether
// it does, and text is released only where the cut leaves no secret
// straddling it.
type liveText struct {
	deltas *Broker[Delta]
	scrub  *tools.Scrubber
	base   Delta

	mu      sync.Mutex
	pending string // raw text not yet released
}

// live returns the round's liveText, or nil when nobody watches the
// session (the model adapter then need not stream deltas at all).
func (e *Engine) live(t *turn) *liveText {
	if !e.deltas.Wanted(Delta{SessionID: t.session.ID}) {
		return nil
	}
	return &liveText{deltas: e.deltas, scrub: e.scrub, base: Delta{SessionID: t.session.ID, TurnID: t.id, Round: t.rounds}}
}

// add is ModelRequest.OnDelta.
func (l *liveText) add(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending += text
	cut := len(l.pending) - l.scrub.Pending(l.pending)
	for cut > 0 && cut < len(l.pending) && !utf8.RuneStart(l.pending[cut]) {
		cut-- // never cut a character in two
	}
	if cut <= 0 {
		return
	}
	head := l.scrub.String(l.pending[:cut])
	if !strings.HasPrefix(l.scrub.String(l.pending), head) {
		return // a secret straddles the cut: wait until it is all behind it
	}
	l.pending = l.pending[cut:]
	l.emit(head)
}

// flush releases what is held back, at the round's end.
func (l *liveText) flush() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	rest := l.scrub.String(l.pending)
	l.pending = ""
	l.emit(rest)
}

func (l *liveText) emit(text string) {
	if text == "" {
		return
	}
	d := l.base
	d.Text = text
	l.deltas.Publish(d)
}
