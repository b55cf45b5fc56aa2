package slack

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// How a workspace shows a turn's text while it is written, best first.
// A workspace moves down the list when Slack refuses a way, and stays.
type liveMode int

const (
	modeStream liveMode = iota // chat.startStream / appendStream / stopStream
	modeUpdate                 // one message, posted then updated
	modePost                   // nothing live: the final post alone
)

// maxLiveText is what one live message holds; the rest continues in a new
// message (Slack's 12,000 characters of markdown per message).
const maxLiveText = 12000

// maxReplies bounds the replies kept before those of sessions outside
// Slack are forgotten.
const maxReplies = 1024

// DefaultLiveInterval is the least time between two writes to one live
// message: appendStream is Tier 4 (about 100 a minute per workspace).
const DefaultLiveInterval = time.Second

// Sessions finds a session by id; *engine.Engine has it.
type Sessions interface {
	engine.SessionReader
	engine.Deltas
}

// Live shows a Slack turn's text in its thread while the model writes it:
// streamed with task updates for tool calls where the workspace allows,
// else one message posted and updated. Deltas come from the engine (never
// the database); the committed agent.message is the truth the live text
// is reconciled with, so a reply is complete even if deltas were missed.
type Live struct {
	Poster   *Poster
	Sessions Sessions
	// Modes remembers each workspace's fallback across restarts; nil
	// remembers it in memory only.
	Modes store.WorkspaceModes
	Now   func() time.Time
	Log   *slog.Logger
	// Interval is the least time between two writes to one message
	// (DefaultLiveInterval when zero).
	Interval time.Duration
	// Pin, when set, keeps the session's delivery here from a reply's
	// first live write until its turn ends (nil: nothing else delivers).
	Pin Pinner

	mu      sync.Mutex
	feed    *engine.DeltaFeed
	replies map[replyKey]*liveReply
	modes   map[string]liveMode // by team
	wake    chan struct{}
}

// replyKey names a turn's reply: a session's next turn may begin (its
// deltas arrive) before the end of the one before is delivered.
type replyKey struct{ session, turn string }

// liveReply is one turn's live text; its fields are guarded by Live.mu,
// its Slack calls serialised by io.
type liveReply struct {
	io sync.Mutex

	session, turn         string
	channel, thread, team string
	user                  string // the recipient Slack needs for a stream
	ignore                bool   // not a Slack thread
	dead                  bool   // Slack stopped it or refused: no more writes
	want                  string // the text to show in all
	round                 int    // the last round seen, for separators
	confirmed             string // the committed agent.messages so far
	confirmedN            int
	written               int    // bytes of want in finished messages and ts
	ts                    string // the current live message, "" none
	shown                 string // what ts shows
	chunks                []slack.StreamChunk
	last                  time.Time
	mode                  liveMode
	tail                  []slack.Block // under the reply when its stream stops (feedback buttons)
	unpin                 func()        // lets the session's delivery go (Live.Pin); nil when not pinned
	pinFrom               time.Time     // the first refused pin
}

func (l *Live) init() {
	if l.replies == nil {
		l.replies = map[replyKey]*liveReply{}
		l.modes = map[string]liveMode{}
		l.wake = make(chan struct{}, 1)
	}
	if l.Interval <= 0 {
		l.Interval = DefaultLiveInterval
	}
	if l.Log == nil {
		l.Log = slog.New(slog.DiscardHandler)
	}
}

// Start begins watching every session's deltas; Run then writes them.
// Start before the engine runs turns, so no first words are missed.
func (l *Live) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if l.feed == nil {
		l.feed = l.Sessions.WatchDeltas("")
	}
}

// Run writes deltas to Slack until ctx ends, then stops the feed.
func (l *Live) Run(ctx context.Context) {
	l.Start()
	defer l.feed.Close()
	defer l.unpinAll()
	for {
		l.mu.Lock()
		l.takeLocked(ctx)
		due, next := l.dueLocked()
		l.mu.Unlock()
		for _, r := range due {
			l.flush(ctx, r, false)
		}
		var timer <-chan time.Time
		var t *time.Timer
		if next > 0 {
			t = time.NewTimer(next)
			timer = t.C
		}
		select {
		case <-ctx.Done():
		case <-l.feed.Ready():
		case <-l.wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (l *Live) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// takeLocked moves the feed's deltas into their replies.
func (l *Live) takeLocked(ctx context.Context) {
	if l.feed == nil {
		return
	}
	for _, d := range l.feed.Take() {
		r := l.replyLocked(ctx, d.SessionID, d.TurnID, nil)
		if r == nil || r.ignore {
			continue
		}
		if r.want != "" && d.Round != r.round {
			r.want += "\n\n"
		}
		r.round = d.Round
		r.want += d.Text
	}
}

// replyLocked returns the session's reply for turn, making it (reading
// the session when s is nil) when the turn is new.
func (l *Live) replyLocked(ctx context.Context, sessionID, turn string, s *engine.Session) *liveReply {
	l.init()
	key := replyKey{sessionID, turn}
	if r, ok := l.replies[key]; ok {
		return r
	}
	if s == nil {
		got, err := l.Sessions.Session(ctx, sessionID)
		if err != nil {
			return nil
		}
		s = &got
	}
	if len(l.replies) >= maxReplies {
		for k, old := range l.replies {
			// Sessions of other channels (cheap to look up again), and
			// turns that ended elsewhere.
			if old.ignore || (old.dead && old.unpin == nil) {
				delete(l.replies, k)
			}
		}
	}
	r := &liveReply{session: sessionID, turn: turn, user: s.StartedBy}
	team, channel, thread, ok := threadParts(s.ThreadKey)
	if !ok || s.Origin != engine.OriginSlack {
		r.ignore = true
	}
	r.team, r.channel, r.thread, r.mode = team, channel, thread, l.modeLocked(ctx, team)
	l.replies[key] = r
	return r
}

// threadParts parses "slack:TEAM:CHANNEL:TS".
func threadParts(key string) (team, channel, ts string, ok bool) {
	t, ok := ParseThread(key)
	return t.Team, t.Channel, t.TS, ok
}

// dueLocked lists replies with something to write now and how long until
// the next one is due.
func (l *Live) dueLocked() ([]*liveReply, time.Duration) {
	now := l.Poster.clock.Now()
	var due []*liveReply
	var next time.Duration
	for _, r := range l.replies {
		if r.ignore || r.dead || r.mode == modePost || (len(r.want) == r.written+len(r.shown) && len(r.chunks) == 0) {
			continue
		}
		wait := r.last.Add(l.Interval).Sub(now)
		if (r.ts == "" && r.last.IsZero()) || wait <= 0 {
			due = append(due, r)
		} else if next == 0 || wait < next {
			next = wait
		}
	}
	return due, next
}

// Message reconciles a committed agent.message with the turn's live text
// and writes what is missing. It reports false when the text must be
// posted the ordinary way (nothing was live, or the live text went wrong).
func (l *Live) Message(ctx context.Context, s engine.Session, turn, text string) bool {
	l.mu.Lock()
	l.takeLocked(ctx)
	r, ok := l.replies[replyKey{s.ID, turn}]
	if !ok || r.ignore || r.dead || r.mode == modePost {
		l.mu.Unlock()
		return false
	}
	if r.confirmedN > 0 {
		r.confirmed += "\n\n"
	}
	r.confirmed += text
	r.confirmedN++
	switch {
	case strings.HasPrefix(r.confirmed, r.want):
		r.want = r.confirmed
	case strings.HasPrefix(r.want, r.confirmed):
	default:
		// What streamed is not what was recorded (deltas lost): stop here
		// and let the recorded text be posted whole.
		r.dead = true
		l.mu.Unlock()
		l.Log.Warn("live text differs from the recorded answer; posting it whole", tools.LogSession, s.ID)
		return false
	}
	l.mu.Unlock()
	l.flush(ctx, r, false)
	l.mu.Lock()
	defer l.mu.Unlock()
	// Refused on the way (the workspace fell back to the final post) or
	// cut short: the recorded text is posted the ordinary way.
	return r.mode != modePost && (!r.dead || r.written+len(r.shown) >= len(r.want))
}

// Tail sets the blocks that go under the turn's streamed reply when its
// stream stops (the feedback buttons of a final answer); the latest call
// wins, so only the turn's last answer carries them.
func (l *Live) Tail(sessionID, turn string, blocks []slack.Block) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.replies[replyKey{sessionID, turn}]; ok {
		r.tail = blocks
	}
}

// Task shows a step (a tool call, a plan step) in the turn's streamed
// message; workspaces without streaming show steps in the status line.
func (l *Live) Task(ctx context.Context, s engine.Session, turn string, chunk slack.StreamChunk) {
	l.mu.Lock()
	r := l.replyLocked(ctx, s.ID, turn, &s)
	if r == nil || r.ignore || r.dead || r.mode != modeStream {
		l.mu.Unlock()
		return
	}
	r.chunks = append(r.chunks, chunk)
	l.mu.Unlock()
	l.poke()
}

// End writes what is left of the turn and closes its live message.
func (l *Live) End(ctx context.Context, s engine.Session, turn string) {
	l.mu.Lock()
	l.takeLocked(ctx)
	r, ok := l.replies[replyKey{s.ID, turn}]
	if !ok {
		l.mu.Unlock()
		return
	}
	delete(l.replies, replyKey{s.ID, turn})
	l.mu.Unlock()
	if !r.ignore {
		l.flush(ctx, r, true)
	}
	l.mu.Lock()
	release := r.unpin
	r.unpin = nil
	l.mu.Unlock()
	if release != nil {
		release()
	}
}

// Workspace modes as stored.
var modeNames = map[liveMode]string{modeStream: "stream", modeUpdate: "update", modePost: "post"}

// modeLocked is the team's mode, read from Modes the first time.
func (l *Live) modeLocked(ctx context.Context, team string) liveMode {
	if m, ok := l.modes[team]; ok {
		return m
	}
	m := modeStream
	if l.Modes != nil && team != "" {
		name, ok, err := l.Modes.WorkspaceMode(ctx, engine.OriginSlack, team)
		if err != nil {
			l.Log.Warn("read workspace mode", tools.LogErr, err)
			return m // ask again next time
		}
		for k, v := range modeNames {
			if ok && v == name {
				m = k
			}
		}
	}
	l.modes[team] = m
	return m
}

// fallBack moves r's workspace (and r) one way down after Slack refused,
// and remembers it.
func (l *Live) fallBack(ctx context.Context, r *liveReply, from liveMode, err error) {
	l.mu.Lock()
	moved := l.modes[r.team] <= from
	if moved {
		l.modes[r.team] = from + 1
	}
	r.mode = from + 1
	l.mu.Unlock()
	if !moved {
		return
	}
	l.Log.Info("slack refused a live reply; falling back", tools.LogSlackChan, r.channel, tools.LogErr, err, tools.LogMode, modeNames[from+1])
	if l.Modes == nil || r.team == "" {
		return
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	if err := l.Modes.SetWorkspaceMode(ctx, now(), engine.OriginSlack, r.team, modeNames[from+1]); err != nil {
		l.Log.Warn("remember workspace mode", tools.LogErr, err)
	}
}

// flush writes r's pending text and chunks; final closes the message.
func (l *Live) flush(ctx context.Context, r *liveReply, final bool) {
	r.io.Lock()
	defer r.io.Unlock()
	for {
		l.mu.Lock()
		if r.dead || r.mode == modePost {
			l.mu.Unlock()
			return
		}
		mode, ts, shown := r.mode, r.ts, r.shown
		pending := r.want[r.written+len(r.shown):]
		room := maxLiveText - len([]rune(shown))
		piece, full := cutRunes(pending, room)
		chunks := r.chunks
		r.chunks = nil
		l.mu.Unlock()

		if piece == "" && len(chunks) == 0 && ts == "" {
			return
		}
		if !l.pin(ctx, r, chunks) {
			return
		}
		var err error
		switch {
		case mode == modeStream && ts == "":
			ts, err = l.Poster.startStream(ctx, r.channel, r.thread, r.user, r.team, piece, chunks)
		case mode == modeStream && (piece != "" || len(chunks) > 0):
			err = l.Poster.appendStream(ctx, r.channel, ts, piece, chunks)
		case mode == modeUpdate && ts == "" && piece != "":
			ts, err = l.Poster.post(ctx, r.channel, liveOptions(r.thread, piece)...)
		case mode == modeUpdate && piece != "":
			err = l.Poster.update(ctx, r.channel, ts, liveOptions("", shown+piece)...)
		}
		var refused slack.SlackErrorResponse
		if errors.As(err, &refused) {
			if ts == "" {
				l.fallBack(ctx, r, mode, err) // try the next way at once
				continue
			}
			l.mu.Lock()
			r.dead = true // stopped from Slack, or the message is gone
			l.mu.Unlock()
			return
		}
		if err != nil {
			if !errors.Is(err, ErrClosed) && ctx.Err() == nil {
				l.Log.Warn("live reply write failed", tools.LogSlackChan, r.channel, tools.LogErr, err)
			}
			l.mu.Lock()
			r.chunks = append(chunks, r.chunks...) // try again after an interval
			r.last = l.Poster.clock.Now()
			l.mu.Unlock()
			return
		}
		l.mu.Lock()
		r.ts, r.shown, r.last = ts, shown+piece, l.Poster.clock.Now()
		if full || final {
			done, text := r.ts, r.shown
			var tail []slack.Block
			if full {
				r.written += len(r.shown)
				r.ts, r.shown = "", ""
			} else {
				tail = r.tail
			}
			l.mu.Unlock()
			if mode == modeStream && done != "" && (full || final) {
				if err := l.Poster.stopStream(ctx, r.channel, done, tail...); err != nil {
					l.Log.Warn("stop stream failed", tools.LogSlackChan, r.channel, tools.LogErr, err)
				}
			}
			if mode == modeUpdate && done != "" && len(tail) > 0 {
				// The posted-and-updated message gets the tail (feedback
				// buttons) in its last update, like a stream's stop.
				if err := l.Poster.update(ctx, r.channel, done, liveOptions("", text, tail...)...); err != nil {
					l.Log.Warn("live reply tail failed", tools.LogSlackChan, r.channel, tools.LogErr, err)
				}
			}
			if full {
				continue
			}
			return
		}
		l.mu.Unlock()
		return
	}
}
