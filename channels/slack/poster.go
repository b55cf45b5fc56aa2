// Package slack renders sessions into Slack with slack-go: replies in
// mrkdwn split under Slack's limits, a status while a turn runs, question
// buttons, approval cards and error notices. Calls to one channel go out in
// order through a per-channel queue that honours rate limits. Renderer maps
// a session's events to those calls; NewClient builds the slack-go client
// from the configured tokens.
//
// It imports engine, store (the messages it updates later) and
// slack-go, never bot, webhooks, a store driver or another channel. Reading clicks
// is the inbound side's job; DecodeValue is here so both sides agree on the
// button values.
package slack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"brain/tools"
)

// ErrClosed is returned by calls made after (or cut short by) Close.
var ErrClosed = errors.New("slack poster closed")

// maxRateLimitRetries bounds how often one call is retried after a 429.
const maxRateLimitRetries = 8

// Clock is the time source of the status throttle.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, like time.AfterFunc.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc; *time.Timer satisfies it.
type Timer interface{ Stop() bool }

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Option configures a Poster.
type Option func(*Poster)

// WithClock sets the clock of the status throttle (tests inject a fake).
func WithClock(c Clock) Option { return func(p *Poster) { p.clock = c } }

// WithPublicURL sets brain's external address (public_url), for links to
// what a message cannot hold (a card's facts beyond Slack's limits).
func WithPublicURL(u string) Option { return func(p *Poster) { p.publicURL = u } }

// WithStatusInterval sets the least time between two updates of a status
// message (default 1s).
func WithStatusInterval(d time.Duration) Option { return func(p *Poster) { p.interval = d } }

// Poster sends to Slack. Safe for concurrent use; Close it when done.
type Poster struct {
	api      *slack.Client
	log      *slog.Logger
	clock    Clock
	interval time.Duration
	idPrefix string
	idSeq    atomic.Uint64
	// consoleURL is the web console's base URL (see WithConsoleURL).
	consoleURL string
	// publicURL is brain's external address, "" when unknown.
	publicURL string

	base   context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // queue goroutines and status flushes

	mu       sync.Mutex
	closed   bool
	lanes    map[string]*lane // channel -> queue, present while busy
	statuses map[threadKey]*statusLine
	plain    map[string]bool // channels where assistant status failed
	// noAgent marks teams whose app lacks the agent view; stopCards holds
	// each running session's Stop message there.
	noAgent   map[string]bool
	stopCards map[string]string
	// noMarkdown is set once Slack refused a markdown block.
	noMarkdown bool
}

// New returns a Poster sending through client.
func New(client *slack.Client, log *slog.Logger, opts ...Option) *Poster {
	var b [4]byte
	_, _ = rand.Read(b[:])
	p := &Poster{
		api:       client,
		log:       log,
		clock:     realClock{},
		interval:  time.Second,
		idPrefix:  hex.EncodeToString(b[:]),
		lanes:     map[string]*lane{},
		statuses:  map[threadKey]*statusLine{},
		plain:     map[string]bool{},
		noAgent:   map[string]bool{},
		stopCards: map[string]string{},
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	for _, o := range opts {
		o(p)
	}
	p.base, p.cancel = context.WithCancel(context.Background())
	return p
}

// Close stops the queues: calls still waiting fail with ErrClosed, calls in
// flight are cancelled, pending status updates are dropped. It returns once
// every goroutine of the Poster has ended; calling it twice is safe.
func (p *Poster) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.cancel()
		for _, st := range p.statuses {
			st.stopTimer()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// blockID returns a block id unique to this Poster, fresh on every call so
// an updated message gets new block ids.
func (p *Poster) blockID(kind string) string {
	return fmt.Sprintf("brain_%s_%s_%d", kind, p.idPrefix, p.idSeq.Add(1))
}

// job is one unit of work on a channel's queue; its calls go out together.
type job struct {
	ctx  context.Context
	run  func(ctx context.Context) error
	done chan error
	// started and abandoned are guarded by Poster.mu.
	started   bool
	abandoned bool // the caller gave up before the job started
}

// lane is a channel's queue; one goroutine drains it while it is not empty.
type lane struct {
	jobs []*job
}

// do runs fn on channel's queue after the jobs queued before it and waits
// for it. fn should make its Slack calls through p.call.
func (p *Poster) do(ctx context.Context, channel string, fn func(ctx context.Context) error) error {
	j := &job{ctx: ctx, run: fn, done: make(chan error, 1)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	l, busy := p.lanes[channel]
	if !busy {
		l = &lane{}
		p.lanes[channel] = l
	}
	l.jobs = append(l.jobs, j)
	if !busy {
		p.wg.Add(1)
		go p.drain(channel, l)
	}
	p.mu.Unlock()
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
	}
	p.mu.Lock()
	if !j.started {
		j.abandoned = true // the queue drops it
		p.mu.Unlock()
		return ctx.Err()
	}
	p.mu.Unlock()
	// Running with the same ctx, it stops soon; wait so fn's results are
	// not read while it still writes them.
	return <-j.done
}

// drain runs a lane's jobs in order and ends when the lane is empty.
func (p *Poster) drain(channel string, l *lane) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		if len(l.jobs) == 0 {
			delete(p.lanes, channel)
			p.mu.Unlock()
			return
		}
		j := l.jobs[0]
		l.jobs = l.jobs[1:]
		j.started = true
		skip := j.abandoned
		p.mu.Unlock()
		if !skip {
			j.done <- p.runJob(j)
		}
	}
}

func (p *Poster) runJob(j *job) error {
	if p.base.Err() != nil {
		return ErrClosed
	}
	if err := j.ctx.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(j.ctx)
	defer cancel()
	stop := context.AfterFunc(p.base, cancel)
	defer stop()
	err := j.run(ctx)
	if err != nil && p.base.Err() != nil && j.ctx.Err() == nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// call makes one Slack call, waiting out 429s (Retry-After, bounded by ctx
// and maxRateLimitRetries) and retrying the same call. It runs inside a
// job, so the channel's later calls wait behind it and order holds.
func (p *Poster) call(ctx context.Context, channel string, fn func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		wait, limited := retryAfter(err)
		if !limited || attempt >= maxRateLimitRetries {
			return err
		}
		p.log.DebugContext(ctx, "slack rate limited", tools.LogSlackChan, channel, tools.LogRetryAfter, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("wait out rate limit: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// retryAfter reports whether err is a 429 and how long to wait. slack-go
// returns a RateLimitedError only when Retry-After is present; a bare 429
// waits a second.
func retryAfter(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests {
		return time.Second, true
	}
	return 0, false
}

// post posts one message on channel's queue and returns its ts.
func (p *Poster) post(ctx context.Context, channel string, opts ...slack.MsgOption) (string, error) {
	var ts string
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) (err error) {
			_, ts, err = p.api.PostMessageContext(ctx, channel, opts...)
			return err
		})
	})
	return ts, err
}

// update replaces a message on channel's queue.
func (p *Poster) update(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	return p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, _, _, err := p.api.UpdateMessageContext(ctx, channel, ts, opts...)
			return err
		})
	})
}
