package slack

import (
	"context"
	"time"

	"github.com/slack-go/slack"

	"brain/tools"
)

// Pinner keeps a session's delivery with a live reply while it streams
// into its thread, so that nothing else posts the reply whole meanwhile
// (bot/bridge.Pins, which knows the replicas).
type Pinner interface {
	// Pin pins the session's delivery for turn's reply. release is nil
	// when it is not pinned: delivered then means the turn was posted
	// whole already, so the reply must not stream; otherwise Pin may be
	// asked again later.
	Pin(ctx context.Context, sessionID, turn string) (release func(), delivered bool, err error)
}

// A reply whose session another replica is delivering (a pass that began
// before the turn) tries to pin it again after pinRetry, for at most
// maxPinWait; then its text is posted whole, by whichever replica
// delivers it.
const (
	pinRetry   = 100 * time.Millisecond
	maxPinWait = 10 * time.Second
)

// unpinAll lets every pinned session's delivery go (Run ends).
func (l *Live) unpinAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.replies {
		if r.unpin != nil {
			r.unpin()
			r.unpin = nil
		}
	}
}

// pin makes sure r's session is delivered here before r is written to
// (see Live.Pin); false means not now, and puts chunks back.
func (l *Live) pin(ctx context.Context, r *liveReply, chunks []slack.StreamChunk) bool {
	l.mu.Lock()
	pinned := l.Pin == nil || r.unpin != nil
	l.mu.Unlock()
	if pinned {
		return true
	}
	release, delivered, err := l.Pin.Pin(ctx, r.session, r.turn)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && release != nil {
		r.unpin = release
		return true
	}
	if delivered {
		r.dead = true // its text is in the thread already
		return false
	}
	if err != nil && ctx.Err() == nil {
		l.Log.Warn("pin the session's delivery for a live reply", tools.LogSession, r.session, tools.LogErr, err)
	}
	r.chunks = append(chunks, r.chunks...)
	now := l.Poster.clock.Now()
	if r.pinFrom.IsZero() {
		r.pinFrom = now
	}
	if now.Sub(r.pinFrom) >= maxPinWait {
		r.dead = true // posted whole once the turn's message is delivered
		return false
	}
	r.last = now.Add(pinRetry - l.Interval) // due again after pinRetry
	l.poke()                                // so Run sets its timer by it
	return false
}
