package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	goslack "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"brain/bot/bridge"
	"brain/bot/config"
	chslack "brain/channels/slack"
	"brain/engine"
	"brain/engine/durable"
	"brain/webhooks/slackhook"
)

// inboxSource names Slack's items in the durable inbox.
const inboxSource = "slack"

// slackBridge connects Slack to the engine. Inbound, the webhook handler (or
// Socket Mode) records each event durably before acknowledging it; a worker
// then turns recorded events into session input and decisions, in order.
// Outbound, a deliverer renders every Slack session's new events into its
// thread, keeping a durable cursor per session.
type slackBridge struct {
	cfg    *config.SlackConfig
	eng    *engine.Engine
	store  slackStore
	client *goslack.Client
	poster *chslack.Poster
	inbox  *bridge.Inbox
	now    func() time.Time
	log    *slog.Logger

	handler *slackhook.Handler
	socket  *socketmode.Client
	wake    chan struct{}

	mu      sync.Mutex
	botUser string
	team    string

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// slackStore is what the Slack bridge keeps beside the engine: its inbox,
// thread routing and delivery state.
type slackStore interface {
	durable.Threads
	durable.Inbox
	durable.ChannelState
}

func newSlackBridge(cfg *config.SlackConfig, eng *engine.Engine, store slackStore, now func() time.Time, log *slog.Logger) *slackBridge {
	opts := []goslack.Option{}
	if cfg.APIURL != "" {
		opts = append(opts, goslack.OptionAPIURL(strings.TrimSuffix(cfg.APIURL, "/")+"/"))
	}
	if cfg.AppToken != "" {
		opts = append(opts, goslack.OptionAppLevelToken(cfg.AppToken))
	}
	client := goslack.New(cfg.BotToken, opts...)
	b := &slackBridge{
		cfg: cfg, eng: eng, store: store, client: client, now: now,
		log:    log.With("channel", "slack"),
		poster: chslack.New(client, log.With("channel", "slack")),
		wake:   make(chan struct{}, 1),
	}
	b.inbox = bridge.NewInbox(store, now, b.poke)
	b.handler = &slackhook.Handler{SigningSecret: cfg.SigningSecret, Inbox: slackInbox{b.inbox}, Clock: now, Logger: b.log}
	if cfg.AppToken != "" {
		b.socket = socketmode.New(client, socketmode.OptionReadLimit(1<<20))
	}
	return b
}

// HTTP is the Events API and interactivity endpoint (/slack/...).
func (b *slackBridge) HTTP() http.Handler { return b.handler }

func (b *slackBridge) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Start learns the bot's identity and starts the worker, the deliverer and,
// with an app token, Socket Mode.
func (b *slackBridge) Start(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	auth, err := b.client.AuthTestContext(actx)
	cancel()
	if err != nil {
		b.log.Error("slack auth.test failed; check slack.bot_token (own messages are still recognised by bot_id)", logErr, err)
	} else {
		b.mu.Lock()
		b.botUser, b.team = auth.UserID, auth.TeamID
		b.mu.Unlock()
		b.handler.BotUserID = auth.UserID
		b.log.Info("slack connected", "team", auth.Team, "bot_user", auth.UserID)
	}
	_ = b.inbox.Start(ctx)
	run, stop := context.WithCancel(context.Background())
	b.cancel = stop
	worker := bridge.Worker{Store: b.store, Source: inboxSource, Now: b.now, Log: b.log, Wake: b.wake, Handle: b.handle}
	out := bridge.Deliverer{Engine: b.eng, Store: b.store, Origin: engine.OriginSlack, Now: b.now, Log: b.log, Renderer: renderFunc(b.deliver)}
	b.wg.Add(2)
	go func() { defer b.wg.Done(); worker.Run(run) }()
	go func() { defer b.wg.Done(); out.Run(run) }()
	if b.socket != nil {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			if err := slackhook.RunSocketMode(run, b.socket, slackInbox{b.inbox}, b.botUserID(), b.log); err != nil && run.Err() == nil {
				b.log.Error("slack socket mode stopped", logErr, err)
			}
		}()
		b.log.Info("slack socket mode on: no public URL needed")
	}
}

// Stop ends the loops. Recorded events not yet worked stay in the inbox.
func (b *slackBridge) Stop() {
	if b.cancel != nil {
		b.cancel()
	}
	_ = b.inbox.Stop(context.Background())
	b.wg.Wait()
	b.poster.Close()
}

func (b *slackBridge) botUserID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.botUser
}

// slackInbox adapts the durable inbox to the webhook's Inbox interface.
type slackInbox struct{ in *bridge.Inbox }

var _ slackhook.Inbox = slackInbox{}

func (s slackInbox) Record(ctx context.Context, it slackhook.Item) (bool, error) {
	payload, err := json.Marshal(it)
	if err != nil {
		return false, err
	}
	return s.in.Record(ctx, durable.Inbound{Source: inboxSource, ThreadKey: it.ThreadKey, Kind: it.Kind, Payload: payload, DedupeKeys: it.DedupeKeys})
}

func (b *slackBridge) handle(ctx context.Context, rec durable.Inbound) error {
	var it slackhook.Item
	if err := json.Unmarshal(rec.Payload, &it); err != nil {
		return fmt.Errorf("decode inbox item: %w", err)
	}
	switch {
	case it.Message != nil:
		return b.onMessage(ctx, it.ThreadKey, *it.Message)
	case it.Action != nil:
		return b.onAction(ctx, *it.Action)
	}
	return nil
}

func (b *slackBridge) onMessage(ctx context.Context, threadKey string, m slackhook.Message) error {
	s, err := b.store.SessionByThread(ctx, threadKey)
	exists := err == nil
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return err
	}
	dm := m.ChannelType == "im"
	inThread := m.ThreadTS != "" && m.ThreadTS != m.TS
	switch {
	case exists:
		if !m.Mention && !dm && !(inThread && b.cfg.RepliesWithoutMention()) {
			return nil
		}
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
		s, _, err = b.eng.CreateSession(ctx, engine.NewSession{
			Agent: b.cfg.Agent, Origin: engine.OriginSlack, ThreadKey: threadKey,
			Interactive: true, StartedBy: m.User, Context: note,
		})
		if err != nil {
			return err
		}
	}
	if s.Status == engine.StatusInterrupted || s.Status == engine.StatusFailed {
		if _, err := b.eng.Resume(ctx, s.ID); err != nil {
			return err
		}
	}
	_, _, err = b.eng.Send(ctx, s.ID, engine.Input{
		Text: m.Text, Author: m.User, IdempotencyKey: "slack:" + m.Channel + ":" + m.TS,
	})
	if errors.Is(err, engine.ErrOverloaded) {
		return bridge.ErrRetryLater
	}
	return err
}

func (b *slackBridge) onAction(ctx context.Context, a slackhook.Action) error {
	v, err := chslack.DecodeValue(a.ActionID, a.Value)
	if err != nil {
		return nil // not our button, or a forged value
	}
	notify := func(text string) error {
		return b.poster.Ephemeral(ctx, a.Channel, a.User, a.ThreadTS, text)
	}
	switch a.ActionID {
	case chslack.ActionAnswer:
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
	case chslack.ActionApprove, chslack.ActionDeny:
		_, err := b.eng.Decide(ctx, v.Approval, engine.Decision{Approve: a.ActionID == chslack.ActionApprove, By: a.User})
		return b.explain(err, notify)
	case chslack.ActionRetry:
		_, err := b.eng.Retry(ctx, v.Approval, engine.Decision{By: a.User})
		return b.explain(err, notify)
	case chslack.ActionResume:
		if _, err := b.eng.Resume(ctx, v.Session); err != nil {
			return b.explain(err, notify)
		}
		return notify("Resumed. Send a message in the thread to continue.")
	}
	return nil
}

// explain turns a refused click into an ephemeral notice for the clicker.
func (b *slackBridge) explain(err error, notify func(string) error) error {
	var ee *engine.Error
	if err == nil || !errors.As(err, &ee) || ee.Code == engine.CodeInternal {
		return err
	}
	if ee.Code == engine.CodeNotFound {
		return notify("This card is stale: its approval no longer exists.")
	}
	return notify(engine.ErrorMessage(err))
}
