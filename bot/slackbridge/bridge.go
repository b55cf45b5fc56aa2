// Package slackbridge connects Slack to the engine. Inbound, the webhook
// handler (or Socket Mode) records each event durably before acknowledging
// it; a worker then turns recorded events into session input and
// decisions, in order: a thread is a session, a click answers its
// question, decides an approval, retries an apply or resumes the session.
// Outbound, a deliverer renders every Slack session's new events into its
// thread, keeping a durable cursor per session; schedule outcomes are
// posted as new threads a reply can follow up on.
//
// It builds on bot/bridge (inbox, worker, deliverer), channels/slack
// (rendering, the slack-go client) and webhooks/slackhook (inbound
// parsing, Socket Mode), on the Engine and Store interfaces below; it does
// not import slack-go itself (channels/slack and slackhook build its
// clients), a store or the bot that wires it.
package slackbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sync"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/bot/filestore"
	"brain/channels/slack"
	"brain/engine"
	"brain/internal/startstop"
	"brain/store"
	"brain/tools"
	"brain/webhooks/slackhook"
)

// InboxSource names Slack's items in the durable inbox.
const InboxSource = "slack"

// tools.LogErr is the log attribute key of errors.
type Engine interface {
	bridge.Engine
	slack.Approvals
	engine.Starter
	StartSessions(ctx context.Context, starts []engine.Start) []engine.Started
	engine.Turns
	engine.Approvals
	MayDecide(ctx context.Context, approvalID string, d engine.Decision) error
	MayDecideApproval(ctx context.Context, a engine.Approval, by string) error
	DecidableApprovals(ctx context.Context, d engine.Decision, limit int) ([]engine.Approval, error)
	RecordFeedback(ctx context.Context, sessionID string, f engine.FeedbackGiven) (engine.Event, error)
	slack.Sessions
	StopFor(ctx context.Context, sessionID, by string) (engine.Session, bool, error)
}

var _ Engine = (*engine.Engine)(nil)

// Store is what the Slack bridge keeps beside the engine: its inbox,
// thread routing and delivery state.
type Store interface {
	store.Threads
	store.Inbox
	store.ChannelState
	store.SessionSearch
	store.CodeChannels
}

// Bridge is the Slack integration: the HTTP endpoints, Socket Mode with an
// app token, the inbox and its worker, the deliverer. New starts nothing;
// Start and Stop follow startstop.Lifecycle.
type Bridge struct {
	cfg      *config.SlackConfig
	eng      Engine
	store    Store
	poster   *slack.Poster
	renderer *slack.Renderer
	reader   *slack.Reader
	files    *filestore.Store // nil: shared files are named, not kept
	live     *slack.Live
	pins     *bridge.Pins // the session delivery leases, shared by the deliverer and live replies
	router   bridge.Router
	// prompts are offered in new assistant threads (the agent's
	// slack.suggested_prompts).
	prompts []string
	inbox   *bridge.Inbox
	now     func() time.Time
	// accounts, when set, lists and revokes a person's connections on
	// the Home tab (homeconn.go).
	accounts Accounts
	log      *slog.Logger

	handler *slackhook.Handler
	socket  *slackhook.Socket // nil without an app token
	wake    chan struct{}

	mu      sync.Mutex
	botUser string
	botID   string
	team    string
	url     string // the workspace's, for thread links
	homes   homeUsers

	life startstop.Lifecycle
	// observeDelivery, when set, times each delivery (SetDeliveryObserver).
	observeDelivery func(time.Duration, error)
	// code routes the sessions that moved to a Slack code channel.
	code *codeChannels
}

var _ bridge.Renderer = (*slack.Renderer)(nil)

// Settings are what the Slack bridge takes from outside the slack block.
type Settings struct {
	// SuggestedPrompts are the Slack agent's agents[].slack.suggested_prompts.
	SuggestedPrompts []string
	// PublicURL is brain's public_url, for links in messages ("" none).
	PublicURL string
}

// New builds the Slack bridge from its config; configure its poster (slack.WithConsoleURL).
func New(cfg *config.SlackConfig, set Settings, eng Engine, store Store, now func() time.Time, log *slog.Logger, opts ...slack.Option) *Bridge {
	client := slack.NewClient(cfg.BotToken, cfg.AppToken, cfg.APIURL)
	log = log.With(tools.LogPlatform, "slack")
	b := &Bridge{
		cfg: cfg, eng: eng, store: store, now: now, log: log,
		poster: slack.New(client, log, append(opts, slack.WithPublicURL(set.PublicURL))...),
		reader: slack.NewReader(client, now),
		wake:   make(chan struct{}, 1),
	}
	b.prompts = set.SuggestedPrompts
	b.code = newCodeChannels(b)
	b.router = bridge.Router{Threads: store, Engine: eng}
	b.renderer = &slack.Renderer{Engine: eng, Store: store, Poster: b.poster, Now: now, Log: log, Events: eng}
	// Streamed text exists only in the replica running the turn: the live
	// reply pins the session's delivery there (claims shared with the
	// deliverer) until the turn's end is rendered.
	b.pins = bridge.NewPins(eng, store, engine.OriginSlack)
	b.live = &slack.Live{Poster: b.poster, Sessions: liveSessions{eng, b.code}, Modes: store, Now: now, Log: log, Pin: b.pins}
	b.renderer.Live = b.live
	b.inbox = bridge.NewInbox(store, now, b.poke)
	b.handler = &slackhook.Handler{SigningSecret: cfg.SigningSecret, Inbox: hookInbox{b.inbox}, Clock: now, Logger: log}
	if cfg.AppToken != "" {
		b.socket = slackhook.NewSocket(client)
	}
	return b
}

// SetContent sets the reader of threads, names and files (one shared
// with the engine's user groups, say) and the store shared files are kept
// in (nil: files are named to the model, not read). Call it before Start.
func (b *Bridge) SetContent(r *slack.Reader, files *filestore.Store) {
	if r != nil {
		b.reader = r
	}
	b.files = files
}

// SetAudience sets who gets copies of approval cards besides the thread
// (approvals.notify); call it before Start.
func (b *Bridge) SetAudience(a slack.Audience) { b.renderer.Audience = a }

// HTTP is the Events API and interactivity endpoint (/slack/...).
func (b *Bridge) HTTP() http.Handler { return b.handler }

func (b *Bridge) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Start learns the bot's identity and starts the inbox, its worker, the
// deliverer and, with an app token, Socket Mode. Safe to call twice; a
// stopped bridge does not start again.
func (b *Bridge) Start(ctx context.Context) error {
	return b.life.Start(ctx, func(ctx context.Context) error {
		b.identify(ctx)
		if err := b.inbox.Start(ctx); err != nil {
			return err
		}
		worker := bridge.Worker{Store: b.store, Source: InboxSource, Now: b.now, Log: b.log, Wake: b.wake, Handle: b.handle,
			HandleBatch: b.handleBatch, Owner: b.eng.ReplicaID(), ClaimFor: b.eng.LeaseTTL()}
		out := bridge.Deliverer{Engine: b.eng, Store: b.store, Origin: engine.OriginSlack, Now: b.now, Log: b.log, Renderer: homeRefresher{b}, Observe: b.observeDelivery, Claims: b.pins.Claims}
		if b.live != nil {
			b.live.Start() // before any turn can run, so no first words are missed
		}
		b.life.Go(worker.Run)
		b.life.Go(out.Run)
		if b.live != nil {
			b.life.Go(b.live.Run)
		}
		if b.socket != nil {
			b.life.Go(b.runSocket)
			b.log.Info("slack socket mode on: no public URL needed")
		}
		return nil
	})
}

// identify asks Slack who the bot is, so its own messages are ignored and
// outcome threads get the team's key. Without an answer brain still runs.
func (b *Bridge) identify(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	id, err := b.poster.Identity(actx)
	cancel()
	if err != nil {
		b.log.Error("slack auth.test failed; check slack.bot_token (own messages are still recognised by bot_id)", tools.LogErr, err)
		return
	}
	b.mu.Lock()
	b.botUser, b.team, b.botID, b.url = id.UserID, id.TeamID, id.BotID, id.URL
	b.mu.Unlock()
	b.handler.BotUserID = id.UserID
	b.log.Info("slack connected", tools.LogTeam, id.Team, tools.LogBotUser, id.UserID)
}

func (b *Bridge) runSocket(ctx context.Context) {
	if err := b.socket.Run(ctx, hookInbox{b.inbox}, b.botUserID(), b.log); err != nil && ctx.Err() == nil {
		b.log.Error("slack socket mode stopped", tools.LogErr, err)
	}
}

// Stop ends the loops, then closes the inbox and the poster. Recorded
// events not yet worked stay in the inbox; undelivered events are
// delivered after the next start. Safe before Start, twice and
// concurrently.
func (b *Bridge) Stop(ctx context.Context) error {
	if err := b.life.Stop(ctx, b.release); err != nil {
		return fmt.Errorf("stop slack bridge: %w", err)
	}
	return nil
}

func (b *Bridge) release() {
	_ = b.inbox.Stop(context.Background())
	b.poster.Close()
}

func (b *Bridge) botUserID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.botUser
}

// identity is the bot's user and bot ids, as auth.test gave them.
func (b *Bridge) identity() (user, botID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.botUser, b.botID
}

func (b *Bridge) workspaceURL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.url
}

// hookInbox adapts the durable inbox to the webhook's Inbox interface.
type hookInbox struct{ in *bridge.Inbox }

var _ slackhook.Inbox = hookInbox{}

func (s hookInbox) Record(ctx context.Context, it slackhook.Item) (bool, error) {
	// Item's own MarshalJSON, not json.Marshal: json.Marshal would scan
	// what it returns again to validate it, a third of the cost of every
	// acknowledged mention's encoding.
	payload, err := it.MarshalJSON()
	if err != nil {
		return false, err
	}
	return s.in.Record(ctx, store.Inbound{Source: InboxSource, ThreadKey: it.ThreadKey, Kind: it.Kind(), Payload: payload, DedupeKeys: it.DedupeKeys})
}

func (b *Bridge) handle(ctx context.Context, rec store.Inbound) error {
	var it slackhook.Item
	if err := json.Unmarshal(rec.Payload, &it); err != nil {
		return fmt.Errorf("decode inbox item: %w", err)
	}
	switch body := it.Body.(type) {
	case *slackhook.Message:
		return b.onMessage(ctx, it.ThreadKey, *body)
	case *slackhook.Action:
		if body.Home {
			v, err := slack.DecodeValue(body.ActionID, body.Value)
			if err != nil {
				return nil
			}
			if body.ActionID == slack.ActionRevokeConnection {
				return b.onHomeRevoke(ctx, v.Connection, body.User)
			}
			return b.onHomeAction(ctx, body.ActionID, v.Approval, body.User)
		}
		return b.onAction(ctx, *body)
	case *slackhook.Home:
		b.rememberHome(body.User)
		return b.publishHome(ctx, body.User)
	case *slackhook.Submission:
		return b.onSubmission(ctx, *body)
	case *slackhook.Stop:
		return b.onStop(ctx, it.ThreadKey, body.Agent)
	case *slackhook.ThreadStarted:
		return b.onThreadStarted(ctx, body.Agent)
	}
	return nil
}

func (b *Bridge) onMessage(ctx context.Context, threadKey string, m slackhook.Message) error {
	s, exists, err := b.router.Session(ctx, threadKey)
	if err != nil {
		return err
	}
	if cs, ok, err := b.code.codeSession(ctx, m); err != nil {
		return err
	} else if ok {
		s, exists, m.Mention = cs, true, true // a code channel: every message is for its session
	}
	dm := m.ChannelType == "im"
	inThread := m.ThreadTS != "" && m.ThreadTS != m.TS
	switch {
	case exists:
		if !m.Mention && !dm && !(inThread && b.cfg.RepliesWithoutMention()) {
			return nil
		}
	case !m.Mention && !dm && !inThread:
		return nil // not for us, whatever note the thread has
	default:
		// A thread brain posted (a schedule's outcome) is marked with a
		// note: replies there start a session that sees it.
		note, marked, err := b.store.ThreadContext(ctx, threadKey)
		if err != nil {
			return err
		}
		if !m.Mention && !dm && !(marked && inThread) {
			return nil // not for us
		}
		if !marked {
			if note, err = b.threadContext(ctx, m); err != nil {
				return err
			}
		}
		var created bool
		s, created, err = b.eng.CreateSession(ctx, engine.NewSession{
			Agent: b.cfg.Agent, Origin: engine.OriginSlack, ThreadKey: threadKey,
			Interactive: true, StartedBy: m.User, Context: note,
		})
		if err != nil {
			return err
		}
		if created && dm {
			b.titleThread(ctx, m)
		}
	}
	refs, lines, err := b.fetchFiles(ctx, m.Files)
	if err != nil {
		return err
	}
	dup, err := b.router.Send(ctx, s, engine.Input{
		Text: m.Text, Author: m.User, IdempotencyKey: "slack:" + m.Channel + ":" + m.TS, Files: refs,
	})
	if err != nil || dup {
		return err
	}
	return b.postFileLines(ctx, m, lines)
}

func (b *Bridge) onAction(ctx context.Context, a slackhook.Action) error {
	v, err := slack.DecodeValue(a.ActionID, a.Value)
	if err != nil {
		return nil // not our button, or a forged value
	}
	notify := func(text string) error {
		return b.poster.Ephemeral(ctx, a.Channel, a.User, a.ThreadTS, text)
	}
	switch a.ActionID {
	case slack.ActionAnswer:
		s, err := b.eng.Session(ctx, v.Session)
		if err != nil {
			return notify("This question belongs to a session that no longer exists.")
		}
		if s.StartedBy != a.User {
			return notify(fmt.Sprintf("Only <@%s> can answer this question.", s.StartedBy))
		}
		q := s.OpenQuestion()
		if q == nil || q.ID != v.Question {
			return notify("This question is already closed.")
		}
		label := v.Value
		for _, o := range q.Options {
			if o.Value == v.Value {
				label = o.Label
			}
		}
		_, _, err = b.eng.Send(ctx, s.ID, engine.Input{
			Text: label, Author: a.User, IdempotencyKey: "slack-answer:" + q.ID,
			Answer: &engine.Answer{QuestionID: q.ID, Value: v.Value},
		})
		switch {
		case errors.Is(err, engine.ErrOverloaded):
			return bridge.ErrRetryLater
		case errors.Is(err, engine.ErrConflict), errors.Is(err, engine.ErrInvalid):
			return notify("This question is already closed.")
		}
		return err
	case slack.ActionAnswerForm:
		return b.openAnswerForm(ctx, a, v, notify)
	case slack.ActionApprove, slack.ActionDeny:
		_, err := b.eng.Decide(ctx, v.Approval, engine.Decision{Approve: a.ActionID == slack.ActionApprove, By: a.User, Surface: engine.SurfaceSlack})
		return explain(err, notify)
	case slack.ActionApproveComment, slack.ActionDenyReason:
		return b.openDecisionForm(ctx, a, v.Approval, a.ActionID == slack.ActionApproveComment, notify)
	case slack.ActionRetry:
		_, err := b.eng.Retry(ctx, v.Approval, engine.Decision{By: a.User, Surface: engine.SurfaceSlack})
		return explain(err, notify)
	case slack.ActionFeedback:
		_, err := b.eng.RecordFeedback(ctx, v.Session, engine.FeedbackGiven{
			By: a.User, MessageID: v.Message, Rating: v.Value, Source: string(engine.OriginSlack),
		})
		return explain(err, notify)
	case slack.ActionStop:
		return b.stop(ctx, v.Session, a.Channel, a.ThreadTS, a.User, notify)
	case slack.ActionRetryCall:
		return b.retryCall(ctx, v, a.User, notify)
	case slack.ActionResume:
		// The same rule as answering: only the person the session talks to.
		s, err := b.eng.Session(ctx, v.Session)
		if err != nil {
			return notify("This session no longer exists.")
		}
		if s.StartedBy != a.User {
			return notify(fmt.Sprintf("Only <@%s> can resume this session.", s.StartedBy))
		}
		r, err := b.eng.ResumeWith(ctx, s.ID, engine.ResumeOptions{Retry: true})
		if err != nil {
			return explain(err, notify)
		}
		if n := len(r.Retried); n > 0 {
			return notify(fmt.Sprintf("Resumed; running %d unanswered message(s) again.", n))
		}
		return notify("Resumed. Send a message in the thread to continue.")
	}
	return nil
}

// explain turns a refused click into an ephemeral notice for the clicker.
func explain(err error, notify func(string) error) error {
	if text, refused := refusal(err); refused {
		return notify(text)
	}
	return err
}

// refusal is what to tell a person whose click the engine refused;
// refused is false for success and for internal errors.
func refusal(err error) (text string, refused bool) {
	text, refused = bridge.Refusal(err)
	var ee *engine.Error
	if refused && errors.As(err, &ee) && ee.Code == engine.CodeNotFound {
		return "This card is stale: its approval no longer exists.", true
	}
	return mentions(slack.Escape(text)), refused
}

// reUserID matches a Slack user id standing alone in an engine message.
var reUserID = regexp.MustCompile(`(^|[\s(,])([UW][A-Z0-9]{6,})\b`)

// mentions renders the Slack user ids in a message as mentions (<@U123>),
// so a notice names people instead of showing raw ids. text is mrkdwn
// already escaped (slack.Escape): the only live sequences are these.
func mentions(text string) string {
	return reUserID.ReplaceAllString(text, "$1<@$2>")
}
