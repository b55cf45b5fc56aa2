package slack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"brain/tools"
)

// maxStatusText bounds a status line.
const maxStatusText = 200

type threadKey struct{ channel, thread string }

// statusLine is the status message of one thread when the assistant status
// is unavailable: posted once, then updated in place, throttled.
type statusLine struct {
	mu    sync.Mutex
	ts    string    // the message, "" until posted
	shown string    // text the message shows
	want  string    // latest text asked for
	last  time.Time // when the message was last written
	timer Timer     // pending trailing update; guarded by Poster.mu
	gone  bool      // cleared; a new SetStatus makes a new line
}

// stopTimer drops a pending trailing update; Poster.mu must be held.
func (st *statusLine) stopTimer() {
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
}

// SetStatus shows text as the thread's progress. It uses the assistant
// thread status; when Slack refuses it for a channel (not_allowed,
// missing_scope, ...), the channel falls back for good to one status
// message per thread, posted once and updated in place at most once per
// status interval, the latest text winning (a trailing update shows a text
// that arrived inside the interval).
func (p *Poster) SetStatus(ctx context.Context, channel, threadTS, text string) error {
	text = truncate(text, maxStatusText)
	if !p.isPlain(channel) {
		err := p.assistantStatus(ctx, channel, threadTS, text)
		if !p.fallBack(ctx, channel, err) {
			return err
		}
	}
	return p.statusMessage(ctx, channel, threadTS, text)
}

// ClearStatus removes the thread's status: it deletes the status message
// (and drops a pending update) or clears the assistant status.
func (p *Poster) ClearStatus(ctx context.Context, channel, threadTS string) error {
	k := threadKey{channel, threadTS}
	p.mu.Lock()
	st := p.statuses[k]
	delete(p.statuses, k)
	plainCh := p.plain[channel]
	p.mu.Unlock()

	var errs []error
	if st != nil {
		st.mu.Lock()
		st.gone = true
		p.mu.Lock()
		st.stopTimer()
		p.mu.Unlock()
		if st.ts != "" {
			err := p.do(ctx, channel, func(ctx context.Context) error {
				return p.call(ctx, channel, func(ctx context.Context) error {
					_, _, err := p.api.DeleteMessageContext(ctx, channel, st.ts)
					return err
				})
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("delete status message: %w", err))
			}
		}
		st.mu.Unlock()
	}
	if !plainCh {
		err := p.assistantStatus(ctx, channel, threadTS, "")
		if !p.fallBack(ctx, channel, err) && err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (p *Poster) assistantStatus(ctx context.Context, channel, threadTS, text string) error {
	params := slack.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: threadTS, Status: text}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			return p.api.SetAssistantThreadsStatusContext(ctx, params)
		})
	})
	if err != nil {
		return fmt.Errorf("set assistant status: %w", err)
	}
	return nil
}

// fallBack reports whether err is Slack refusing the assistant status, and
// if so marks the channel to use status messages from now on.
func (p *Poster) fallBack(ctx context.Context, channel string, err error) bool {
	var refused slack.SlackErrorResponse
	if !errors.As(err, &refused) {
		return false
	}
	p.mu.Lock()
	first := !p.plain[channel]
	p.plain[channel] = true
	p.mu.Unlock()
	if first {
		p.log.InfoContext(ctx, "assistant status refused, using a status message", tools.LogSlackChan, channel, tools.LogErr, refused.Err)
	}
	return true
}

func (p *Poster) isPlain(channel string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.plain[channel]
}

// line returns the thread's status line, locked, creating it if needed.
func (p *Poster) line(k threadKey) (*statusLine, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		st := p.statuses[k]
		if st == nil {
			st = &statusLine{}
			p.statuses[k] = st
		}
		p.mu.Unlock()
		st.mu.Lock()
		if !st.gone {
			return st, nil
		}
		st.mu.Unlock() // cleared meanwhile: take the new one
	}
}

func (p *Poster) statusMessage(ctx context.Context, channel, threadTS, text string) error {
	k := threadKey{channel, threadTS}
	st, err := p.line(k)
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	st.want = text
	now := p.clock.Now()
	p.mu.Lock()
	pending := st.timer != nil
	p.mu.Unlock()
	switch {
	case st.ts == "":
		opts := []slack.MsgOption{slack.MsgOptionText(Escape(text), false)}
		if threadTS != "" {
			opts = append(opts, slack.MsgOptionTS(threadTS))
		}
		ts, err := p.post(ctx, channel, opts...)
		if err != nil {
			return fmt.Errorf("post status message: %w", err)
		}
		st.ts, st.shown, st.last = ts, text, now
	case pending:
		// A trailing update is due; it will show the latest text.
	case st.want == st.shown:
	case now.Sub(st.last) >= p.interval:
		return p.writeStatus(ctx, channel, st)
	default:
		p.mu.Lock()
		if !p.closed {
			st.timer = p.clock.AfterFunc(st.last.Add(p.interval).Sub(now), func() { p.flushStatus(k, st) })
		}
		p.mu.Unlock()
	}
	return nil
}

// writeStatus updates the status message to the latest text; st.mu held.
func (p *Poster) writeStatus(ctx context.Context, channel string, st *statusLine) error {
	text := st.want
	if err := p.update(ctx, channel, st.ts, slack.MsgOptionText(Escape(text), false)); err != nil {
		return fmt.Errorf("update status message: %w", err)
	}
	st.shown, st.last = text, p.clock.Now()
	return nil
}

// flushStatus is the trailing update, run by the clock's timer.
func (p *Poster) flushStatus(k threadKey, st *statusLine) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.wg.Add(1)
	st.timer = nil
	p.mu.Unlock()
	defer p.wg.Done()

	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gone || st.want == st.shown {
		return
	}
	if err := p.writeStatus(p.base, k.channel, st); err != nil && !errors.Is(err, ErrClosed) {
		p.log.Warn("status update failed", tools.LogSlackChan, k.channel, tools.LogSlackTS, k.thread, tools.LogErr, err)
	}
}
