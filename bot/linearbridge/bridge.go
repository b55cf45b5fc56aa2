// Package linearbridge connects Linear's Agent API to the engine: webhooks
// are verified and recorded before the 200, a worker turns them into
// session input (a Linear agent session is a brain session), and a
// deliverer renders each session's events as agent activities with ids
// derived from the events, so retries never duplicate an activity.
//
// It builds on bot/bridge (inbox, worker, deliverer), channels/linear
// (activities over GraphQL) and webhooks/linearhook (inbound parsing), on
// the Engine and Store interfaces below; it never imports a store or the
// bot that wires it.
package linearbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/channels/linear"
	"brain/engine"
	"brain/engine/durable"
	"brain/tools"
	"brain/webhooks/linearhook"
)

// InboxSource names Linear's items in the durable inbox.
const InboxSource = "linear"

// logErr is the log attribute key of errors.
const logErr = "err"

// Engine is what the Linear bridge asks of the engine; *engine.Engine has
// it.
type Engine interface {
	bridge.Engine
	linear.Events
	CreateSession(ctx context.Context, n engine.NewSession) (s engine.Session, created bool, err error)
	Send(ctx context.Context, sessionID string, in engine.Input) (ev engine.Event, duplicate bool, err error)
	Resume(ctx context.Context, sessionID string) (engine.Session, error)
	ResumeWith(ctx context.Context, sessionID string, o engine.ResumeOptions) (engine.Resumed, error)
	Cancel(ctx context.Context, sessionID string) (engine.Session, error)
	Decide(ctx context.Context, approvalID string, d engine.Decision) (engine.Approval, error)
}

var _ Engine = (*engine.Engine)(nil)

// Store is what the Linear bridge keeps beside the engine: its inbox,
// thread routing and delivery cursors.
type Store interface {
	durable.Threads
	durable.Inbox
	durable.DeliveryCursors
}

// Bridge is the Linear integration: the webhook endpoint, the inbox and
// its worker, the deliverer. New starts nothing; Start and Stop follow
// bridge.Lifecycle.
type Bridge struct {
	cfg      *config.LinearConfig
	eng      Engine
	store    Store
	client   *linear.Client
	renderer *linear.Renderer
	inbox    *bridge.Inbox
	handler  *linearhook.Handler
	now      func() time.Time
	log      *slog.Logger
	wake     chan struct{}

	life bridge.Lifecycle
}

var _ bridge.Renderer = (*linear.Renderer)(nil)

// New builds the Linear bridge from its config.
func New(cfg *config.LinearConfig, eng Engine, store Store, now func() time.Time, log *slog.Logger) *Bridge {
	log = log.With(tools.LogPlatform, "linear")
	b := &Bridge{
		cfg: cfg, eng: eng, store: store, now: now, log: log,
		client: linear.New(cfg.APIURL, cfg.AccessToken, nil, log),
		wake:   make(chan struct{}, 1),
	}
	b.renderer = &linear.Renderer{Engine: eng, Client: b.client, Log: log}
	b.inbox = bridge.NewInbox(store, now, func() {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	})
	b.handler = &linearhook.Handler{Secret: cfg.WebhookSecret, Inbox: hookInbox{b.inbox}, Clock: now, Logger: log}
	return b
}

// HTTP is the webhook endpoint (/linear/webhook).
func (b *Bridge) HTTP() http.Handler { return b.handler }

// Start runs the inbox, its worker and the deliverer. Safe to call twice;
// a stopped bridge does not start again.
func (b *Bridge) Start(ctx context.Context) error {
	return b.life.Start(ctx, func(ctx context.Context) error {
		if err := b.inbox.Start(ctx); err != nil {
			return err
		}
		worker := bridge.Worker{Store: b.store, Source: InboxSource, Now: b.now, Log: b.log, Wake: b.wake, Handle: b.handle}
		out := bridge.Deliverer{Engine: b.eng, Store: b.store, Origin: engine.OriginLinear, Now: b.now, Log: b.log, Renderer: b.renderer}
		b.life.Go(worker.Run)
		b.life.Go(out.Run)
		return nil
	})
}

// Stop ends the loops, then closes the inbox; recorded webhooks not yet
// worked stay in it. Safe before Start, twice and concurrently.
func (b *Bridge) Stop(ctx context.Context) error {
	if err := b.life.Stop(ctx, func() { _ = b.inbox.Stop(context.Background()) }); err != nil {
		return fmt.Errorf("stop linear bridge: %w", err)
	}
	return nil
}

// hookInbox adapts the durable inbox to the webhook's Inbox interface.
// Both the delivery id and the signed event key dedupe, so neither a retry
// nor a replay with a forged delivery header is worked twice.
type hookInbox struct{ in *bridge.Inbox }

var _ linearhook.Inbox = hookInbox{}

func (l hookInbox) Record(ctx context.Context, it linearhook.Item) (bool, error) {
	payload, err := json.Marshal(it)
	if err != nil {
		return false, err
	}
	keys := []string{"linear:event:" + it.EventKey}
	if it.DeliveryID != "" && it.DeliveryID != it.EventKey {
		keys = append(keys, "linear:delivery:"+it.DeliveryID)
	}
	return l.in.Record(ctx, durable.Inbound{Source: InboxSource, ThreadKey: it.ThreadKey, Kind: it.Kind, Payload: payload, DedupeKeys: keys})
}

func (b *Bridge) handle(ctx context.Context, rec durable.Inbound) error {
	var it linearhook.Item
	if err := json.Unmarshal(rec.Payload, &it); err != nil {
		return fmt.Errorf("decode inbox item: %w", err)
	}
	s, err := b.store.SessionByThread(ctx, it.ThreadKey)
	exists := err == nil
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return err
	}
	if it.Kind == linearhook.KindCreated {
		// Linear shows the session as unresponsive without an activity
		// within 10 s: acknowledge before the model is even asked.
		if err := b.client.Thought(ctx, it.SessionID, linear.ActivityID(it.SessionID, "ack"), "Looking into it…", false); err != nil {
			b.log.Error("acknowledge linear session", logErr, err)
		}
	}
	if it.Stop {
		if exists {
			if _, err := b.eng.Cancel(ctx, s.ID); err != nil {
				return err
			}
		}
		return b.client.Response(ctx, it.SessionID, linear.ActivityID(it.SessionID, "stop", it.EventKey), "Stopped.")
	}
	if id, ok := linear.ParseRetryValue(it.Text); ok {
		return b.retry(ctx, it, s, exists && s.ID == id)
	}
	if id, approve, ok := linear.ParseApprovalValue(it.Text); ok {
		_, err := b.eng.Decide(ctx, id, engine.Decision{Approve: approve, By: it.UserID})
		var ee *engine.Error
		if errors.As(err, &ee) && ee.Code != engine.CodeInternal {
			return b.client.Thought(ctx, it.SessionID, linear.ActivityID(it.SessionID, "decision", it.EventKey), ee.Message, false)
		}
		return err
	}
	if !exists {
		// A prompted may arrive before its created: either one starts it.
		s, _, err = b.eng.CreateSession(ctx, engine.NewSession{
			Agent: b.cfg.Agent, Origin: engine.OriginLinear, ThreadKey: it.ThreadKey,
			Interactive: true, StartedBy: it.UserID,
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
	_, _, err = b.eng.Send(ctx, s.ID, engine.Input{Text: it.Prompt(), Author: it.UserID, IdempotencyKey: "linear:" + it.EventKey})
	if errors.Is(err, engine.ErrOverloaded) {
		return bridge.ErrRetryLater
	}
	return err
}

// retry answers a "Run again" pick: the session resumes and queues again
// what its stop left unanswered. Only this agent session's own session may
// be retried from it (mine is false for a value naming another session).
func (b *Bridge) retry(ctx context.Context, it linearhook.Item, s engine.Session, mine bool) error {
	id := linear.ActivityID(it.SessionID, "retry", it.EventKey)
	if !mine {
		return b.client.Thought(ctx, it.SessionID, id, "That choice belongs to another session; nothing was run.", false)
	}
	r, err := b.eng.ResumeWith(ctx, s.ID, engine.ResumeOptions{Retry: true})
	var ee *engine.Error
	switch {
	case errors.As(err, &ee) && ee.Code != engine.CodeInternal:
		return b.client.Thought(ctx, it.SessionID, id, engine.ErrorMessage(err), false)
	case err != nil:
		return err
	case len(r.Retried) == 0:
		return b.client.Thought(ctx, it.SessionID, id, "Resumed; there was nothing left to run again.", false)
	}
	return b.client.Thought(ctx, it.SessionID, id, fmt.Sprintf("Running %d unanswered message(s) again.", len(r.Retried)), false)
}
