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
	"sync"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/channels/linear"
	"brain/engine"
	"brain/internal/startstop"
	"brain/store"
	"brain/tools"
	"brain/webhooks/linearhook"
)

// InboxSource names Linear's items in the durable inbox.
const InboxSource = "linear"

// tools.LogErr is the log attribute key of errors.
// it.
type Engine interface {
	bridge.Engine
	linear.Events
	engine.Starter
	engine.Turns
	engine.Approvals
}

var _ Engine = (*engine.Engine)(nil)

// Store is what the Linear bridge keeps beside the engine: its inbox,
// thread routing and delivery cursors.
type Store interface {
	store.Threads
	store.Inbox
	store.DeliveryCursors
	store.LinearTokens
}

// Bridge is the Linear integration: the webhook endpoint, the inbox and
// its worker, the deliverer. New starts nothing; Start and Stop follow
// startstop.Lifecycle.
type Bridge struct {
	cfg       *config.LinearConfig
	publicURL string
	eng       Engine
	store     Store
	// static is the client of linear.access_token, nil without one.
	static    *linear.Client
	tokens    *Tokens
	installer *Installer
	renderer  *linear.Renderer
	router    bridge.Router

	mu      sync.Mutex
	clients map[string]*linear.Client // by organization, OAuth tokens
	// reconnected carries workspaces just (re)installed, whose parked
	// webhooks go back to the inbox.
	reconnected chan string
	acks        sync.WaitGroup // early acknowledgements in flight
	inbox       *bridge.Inbox
	handler     *linearhook.Handler
	now         func() time.Time
	log         *slog.Logger
	wake        chan struct{}

	life startstop.Lifecycle
	// observeDelivery, when set, times each delivery (SetDeliveryObserver).
	observeDelivery func(time.Duration, error)
}

var _ bridge.Renderer = (*linear.Renderer)(nil)

// New builds the Linear bridge from its config; publicURL is brain's
// public base URL ("" when unset), for the OAuth install and links.
func New(cfg *config.LinearConfig, publicURL string, eng Engine, store Store, now func() time.Time, log *slog.Logger) *Bridge {
	log = log.With(tools.LogPlatform, "linear")
	b := &Bridge{
		cfg: cfg, publicURL: publicURL, eng: eng, store: store, now: now, log: log,
		clients:     map[string]*linear.Client{},
		wake:        make(chan struct{}, 1),
		reconnected: make(chan string, 16),
	}
	if cfg.AccessToken != "" {
		b.static = linear.New(cfg.APIURL, cfg.AccessToken, nil, log)
	}
	oauth := linear.OAuth{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.TokenURL}
	b.tokens = &Tokens{Store: store, OAuth: oauth, Now: now, Log: log, Install: publicURL + InstallPath}
	if cfg.OAuth() {
		b.installer = &Installer{
			Store: store, OAuth: oauth, AuthorizeURL: cfg.AuthorizeURL, ClientID: cfg.ClientID,
			PublicURL: publicURL, APIURL: cfg.APIURL, Now: now, Log: log, Connected: b.connected,
		}
	}
	b.renderer = &linear.Renderer{Engine: eng, ClientFor: b.sessionClient, Log: log, ReviewState: cfg.ReviewState}
	b.router = bridge.Router{Threads: store, Engine: eng}
	b.inbox = bridge.NewInbox(store, now, func() {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	})
	b.handler = &linearhook.Handler{Secret: cfg.WebhookSecret, Inbox: hookInbox{b}, Clock: now, Logger: log}
	return b
}

// HTTP is the webhook endpoint (/linear/webhook).
func (b *Bridge) HTTP() http.Handler { return b.handler }

// InstallHandler serves GET /linear/oauth/install and CallbackHandler GET
// /linear/oauth/callback; both are nil without linear.client_id.
func (b *Bridge) InstallHandler() http.Handler {
	if b.installer == nil {
		return nil
	}
	return http.HandlerFunc(b.installer.Install)
}

// CallbackHandler serves GET /linear/oauth/callback; see InstallHandler.
func (b *Bridge) CallbackHandler() http.Handler {
	if b.installer == nil {
		return nil
	}
	return http.HandlerFunc(b.installer.Callback)
}

// Warnings are what an operator should know at start-up.
func (b *Bridge) Warnings() []string {
	if b.cfg.AccessToken != "" {
		return []string{"linear.access_token is a static token and is never refreshed: OAuth access tokens of Linear apps expire after about 24 h; set linear.client_id and install the app at public_url + " + InstallPath}
	}
	return nil
}

// client returns the client that speaks for a workspace: its OAuth tokens
// when it installed the app, else the static token; ErrDisconnected when
// neither exists.
func (b *Bridge) client(ctx context.Context, org string) (*linear.Client, error) {
	if org != "" && b.cfg.OAuth() {
		b.mu.Lock()
		c, ok := b.clients[org]
		b.mu.Unlock()
		if ok {
			return c, nil
		}
		_, err := b.store.LinearToken(ctx, org)
		switch {
		case err == nil:
			c = linear.NewWithTokens(b.cfg.APIURL, b.tokens.Source(org), nil, b.log)
			b.mu.Lock()
			if old, ok := b.clients[org]; ok {
				c = old
			} else {
				b.clients[org] = c
			}
			b.mu.Unlock()
			return c, nil
		case !errors.Is(err, engine.ErrNotFound):
			return nil, err
		}
	}
	if b.static != nil {
		return b.static, nil
	}
	if org == "" {
		return nil, fmt.Errorf("%w: the webhook named no workspace and linear.access_token is not set", ErrDisconnected)
	}
	return nil, fmt.Errorf("%w: workspace %s never installed the app; install it at %s", ErrDisconnected, org, b.publicURL+InstallPath)
}

// sessionClient is the client of the workspace an agent session belongs
// to.
func (b *Bridge) sessionClient(ctx context.Context, agentSessionID string) (*linear.Client, error) {
	org, _, err := b.store.LinearSessionOrganization(ctx, agentSessionID)
	if err != nil {
		return nil, err
	}
	return b.client(ctx, org)
}

// connected is told by the installer that a workspace was (re)connected.
func (b *Bridge) connected(ctx context.Context, org string) {
	select {
	case b.reconnected <- org:
	default: // the loop is busy; the next start unparks it too
	}
}

// parked reports whether webhooks of the workspace must wait: it uses
// OAuth and is not installed (nor covered by a static token), or Linear
// refused its refresh token.
func (b *Bridge) parked(ctx context.Context, org string) (bool, error) {
	if org == "" || !b.cfg.OAuth() {
		return false, nil
	}
	tok, err := b.store.LinearToken(ctx, org)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return b.static == nil, nil
	case err != nil:
		return false, err
	}
	if tok.Status == store.LinearRevoked {
		return true, nil
	}
	// Make sure the token works (refreshing it if due), so a refresh
	// Linear refuses parks this webhook rather than running a turn whose
	// answers cannot be delivered. Other failures may pass: the calls
	// that follow retry.
	_, err = b.tokens.token(ctx, org, "")
	return errors.Is(err, ErrDisconnected), nil
}

// unparkLoop moves the webhooks kept for a disconnected workspace back to
// the inbox once it reconnects, and at start for every connected one (a
// reinstall may have come just before a crash).
func (b *Bridge) unparkLoop(ctx context.Context) {
	if toks, err := b.store.LinearTokens(ctx); err != nil {
		b.log.Error("list linear workspaces", tools.LogErr, err)
	} else {
		for _, tok := range toks {
			if tok.Status == store.LinearConnected {
				b.unpark(ctx, tok.OrganizationID)
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case org := <-b.reconnected:
			b.unpark(ctx, org)
		}
	}
}

func (b *Bridge) unpark(ctx context.Context, org string) {
	items, err := b.store.ParkedLinearInbound(ctx, org)
	if err != nil {
		b.log.Error("list parked linear webhooks", tools.LogOrg, org, tools.LogErr, err)
		return
	}
	for _, it := range items {
		// A fresh dedupe key: the item's own keys were recorded when it
		// first arrived. Recorded twice after a crash, it dedupes.
		in := store.Inbound{Source: InboxSource, ThreadKey: it.ThreadKey, Kind: it.Kind, Payload: it.Payload,
			DedupeKeys: []string{fmt.Sprintf("linear:unparked:%d", it.ID)}}
		if _, err := b.inbox.Record(ctx, in); err != nil {
			b.log.Error("requeue parked linear webhook", tools.LogOrg, org, tools.LogErr, err)
			return
		}
		if err := b.store.UnparkLinearInbound(ctx, it.ID); err != nil {
			b.log.Error("unpark linear webhook", tools.LogOrg, org, tools.LogErr, err)
			return
		}
	}
	if len(items) > 0 {
		b.log.Info("linear workspace reconnected; running the webhooks kept meanwhile", tools.LogOrg, org, tools.LogCount, len(items))
	}
}

// Start runs the inbox, its worker and the deliverer. Safe to call twice;
// a stopped bridge does not start again.
func (b *Bridge) Start(ctx context.Context) error {
	return b.life.Start(ctx, func(ctx context.Context) error {
		if err := b.inbox.Start(ctx); err != nil {
			return err
		}
		worker := bridge.Worker{Store: b.store, Source: InboxSource, Now: b.now, Log: b.log, Wake: b.wake, Handle: b.handle,
			Owner: b.eng.ReplicaID(), ClaimFor: b.eng.LeaseTTL()}
		out := bridge.Deliverer{Engine: b.eng, Store: b.store, Origin: engine.OriginLinear, Now: b.now, Log: b.log, Renderer: b.renderer, Observe: b.observeDelivery}
		b.life.Go(worker.Run)
		b.life.Go(out.Run)
		b.life.Go(b.unparkLoop)
		return nil
	})
}

// Stop ends the loops, then closes the inbox; recorded webhooks not yet
// worked stay in it. Safe before Start, twice and concurrently.
func (b *Bridge) Stop(ctx context.Context) error {
	if err := b.life.Stop(ctx, func() { b.acks.Wait(); _ = b.inbox.Stop(context.Background()) }); err != nil {
		return fmt.Errorf("stop linear bridge: %w", err)
	}
	return nil
}

// hookInbox adapts the durable inbox to the webhook's Inbox interface.
// Both the delivery id and the signed event key dedupe, so neither a retry
// nor a replay with a forged delivery header is worked twice.
// A created session is acknowledged at once, before the worker gets to it.
type hookInbox struct{ b *Bridge }

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
	dup, err := l.b.inbox.Record(ctx, store.Inbound{Source: InboxSource, ThreadKey: it.ThreadKey, Kind: it.Kind, Payload: payload, DedupeKeys: keys})
	if err == nil && !dup {
		l.b.ackEarly(it)
	}
	return dup, err
}

func (b *Bridge) handle(ctx context.Context, rec store.Inbound) error {
	var it linearhook.Item
	if err := json.Unmarshal(rec.Payload, &it); err != nil {
		return fmt.Errorf("decode inbox item: %w", err)
	}
	if it.OrganizationID != "" {
		if err := b.store.SetLinearSessionOrganization(ctx, b.now(), it.SessionID, it.OrganizationID); err != nil {
			return err
		}
	}
	if it.TeamID != "" {
		if err := b.store.SetLinearSessionTeam(ctx, b.now(), it.SessionID, it.TeamID); err != nil {
			return err
		}
	}
	if park, err := b.parked(ctx, it.OrganizationID); err != nil {
		return err
	} else if park {
		b.log.Warn("linear workspace is not connected; webhook kept until it is (install the app at "+b.publicURL+InstallPath+")",
			tools.LogOrg, it.OrganizationID, tools.LogThread, it.ThreadKey)
		if err := b.store.ParkLinearInbound(ctx, b.now(), it.OrganizationID, rec); err != nil {
			return err
		}
		// A reinstall between the check and the park unparked nothing:
		// look again now that the item is parked.
		if still, err := b.parked(ctx, it.OrganizationID); err == nil && !still {
			b.connected(ctx, it.OrganizationID)
		}
		return nil
	}
	client, err := b.client(ctx, it.OrganizationID)
	if err != nil {
		return err
	}
	s, exists, err := b.router.Session(ctx, it.ThreadKey)
	if err != nil {
		return err
	}
	if it.Kind == linearhook.KindCreated {
		// Linear shows the session as unresponsive without an activity
		// within 10 s: acknowledge before the model is even asked.
		if err := client.Thought(ctx, it.SessionID, ackID(it.SessionID), ackText, false); err != nil {
			b.log.Error("acknowledge linear session", tools.LogErr, err)
		}
	}
	if it.Stop {
		if exists {
			if _, err := b.eng.Cancel(ctx, s.ID); err != nil {
				return err
			}
		}
		return client.Response(ctx, it.SessionID, linear.ActivityID(it.SessionID, "stop", it.EventKey), "Stopped.")
	}
	if id, ok := linear.ParseRetryValue(it.Text); ok {
		return b.retry(ctx, client, it, s, exists && s.ID == id)
	}
	if id, approve, ok := linear.ParseApprovalValue(it.Text); ok {
		return b.decide(ctx, client, it, id, engine.Decision{Approve: approve, By: it.UserID, Surface: engine.SurfaceLinear})
	}
	if id, approve, comment, ok := linear.ParseApprovalReply(it.Text); ok && exists {
		if id == "" {
			var msg string
			if id, msg, err = b.onlyPending(ctx, s.ID); err != nil {
				return err
			}
			if msg != "" {
				return client.Thought(ctx, it.SessionID, linear.ActivityID(it.SessionID, "decision", it.EventKey), msg, false)
			}
		}
		return b.decide(ctx, client, it, id, engine.Decision{Approve: approve, By: it.UserID, Surface: engine.SurfaceLinear, Comment: comment})
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
	if it.Kind == linearhook.KindCreated {
		b.startSession(ctx, client, it, s)
	}
	_, err = b.router.Send(ctx, s, engine.Input{Text: prompt(it), Author: it.UserID, IdempotencyKey: "linear:" + it.EventKey})
	return err
}

// retry answers a "Run again" pick: the session resumes and queues again
// what its stop left unanswered. Only this agent session's own session may
// be retried from it (mine is false for a value naming another session).
func (b *Bridge) retry(ctx context.Context, client *linear.Client, it linearhook.Item, s engine.Session, mine bool) error {
	id := linear.ActivityID(it.SessionID, "retry", it.EventKey)
	if !mine {
		return client.Thought(ctx, it.SessionID, id, "That choice belongs to another session; nothing was run.", false)
	}
	r, err := b.eng.ResumeWith(ctx, s.ID, engine.ResumeOptions{Retry: true})
	text, refused := bridge.Refusal(err)
	switch {
	case refused:
		return client.Thought(ctx, it.SessionID, id, text, false)
	case err != nil:
		return err
	case len(r.Retried) == 0:
		return client.Thought(ctx, it.SessionID, id, "Resumed; there was nothing left to run again.", false)
	}
	return client.Thought(ctx, it.SessionID, id, fmt.Sprintf("Running %d unanswered message(s) again.", len(r.Retried)), false)
}
