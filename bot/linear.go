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

	"brain/bot/bridge"
	"brain/bot/config"
	chlinear "brain/channels/linear"
	"brain/engine"
	"brain/engine/durable"
	"brain/webhooks/linearhook"
)

// linearSource names Linear's items in the durable inbox.
const linearSource = "linear"

// linearBridge connects Linear's Agent API to the engine: webhooks are
// verified and recorded before the 200, a worker turns them into session
// input (a Linear agent session is a brain session), and a deliverer
// renders each session's events as agent activities with ids derived from
// the events, so retries never duplicate an activity.
type linearBridge struct {
	cfg     *config.LinearConfig
	eng     *engine.Engine
	store   linearStore
	client  *chlinear.Client
	inbox   *bridge.Inbox
	handler *linearhook.Handler
	now     func() time.Time
	log     *slog.Logger
	wake    chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// linearStore is what the Linear bridge keeps beside the engine: its inbox,
// thread routing and delivery cursors.
type linearStore interface {
	durable.Threads
	durable.Inbox
	durable.DeliveryCursors
}

func newLinearBridge(cfg *config.LinearConfig, eng *engine.Engine, store linearStore, now func() time.Time, log *slog.Logger) *linearBridge {
	b := &linearBridge{
		cfg: cfg, eng: eng, store: store, now: now,
		log:    log.With("channel", "linear"),
		client: chlinear.New(cfg.APIURL, cfg.AccessToken, nil, log.With("channel", "linear")),
		wake:   make(chan struct{}, 1),
	}
	b.inbox = bridge.NewInbox(store, now, func() {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	})
	b.handler = &linearhook.Handler{Secret: cfg.WebhookSecret, Inbox: linearInbox{b.inbox}, Clock: now, Logger: b.log}
	return b
}

// HTTP is the webhook endpoint (/linear/webhook).
func (b *linearBridge) HTTP() http.Handler { return b.handler }

// Start runs the inbox worker and the deliverer.
func (b *linearBridge) Start(ctx context.Context) {
	_ = b.inbox.Start(ctx)
	run, stop := context.WithCancel(context.Background())
	b.cancel = stop
	worker := bridge.Worker{Store: b.store, Source: linearSource, Now: b.now, Log: b.log, Wake: b.wake, Handle: b.handle}
	out := bridge.Deliverer{Engine: b.eng, Store: b.store, Origin: engine.OriginLinear, Now: b.now, Log: b.log, Renderer: renderFunc(b.deliver)}
	b.wg.Add(2)
	go func() { defer b.wg.Done(); worker.Run(run) }()
	go func() { defer b.wg.Done(); out.Run(run) }()
}

// Stop ends the loops; recorded webhooks not yet worked stay in the inbox.
func (b *linearBridge) Stop() {
	if b.cancel != nil {
		b.cancel()
	}
	_ = b.inbox.Stop(context.Background())
	b.wg.Wait()
}

// linearInbox adapts the durable inbox to the webhook's Inbox interface.
// Both the delivery id and the signed event key dedupe, so neither a retry
// nor a replay with a forged delivery header is worked twice.
type linearInbox struct{ in *bridge.Inbox }

var _ linearhook.Inbox = linearInbox{}

func (l linearInbox) Record(ctx context.Context, it linearhook.Item) (bool, error) {
	payload, err := json.Marshal(it)
	if err != nil {
		return false, err
	}
	keys := []string{"linear:event:" + it.EventKey}
	if it.DeliveryID != "" && it.DeliveryID != it.EventKey {
		keys = append(keys, "linear:delivery:"+it.DeliveryID)
	}
	return l.in.Record(ctx, durable.Inbound{Source: linearSource, ThreadKey: it.ThreadKey, Kind: it.Kind, Payload: payload, DedupeKeys: keys})
}

func (b *linearBridge) handle(ctx context.Context, rec durable.Inbound) error {
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
		if err := b.client.Thought(ctx, it.SessionID, chlinear.ActivityID(it.SessionID, "ack"), "Looking into it…", false); err != nil {
			b.log.Error("acknowledge linear session", logErr, err)
		}
	}
	if it.Stop {
		if exists {
			if _, err := b.eng.Cancel(ctx, s.ID); err != nil {
				return err
			}
		}
		return b.client.Response(ctx, it.SessionID, chlinear.ActivityID(it.SessionID, "stop", it.EventKey), "Stopped.")
	}
	if id, approve, ok := chlinear.ParseApprovalValue(it.Text); ok {
		_, err := b.eng.Decide(ctx, id, engine.Decision{Approve: approve, By: it.UserID})
		var ee *engine.Error
		if errors.As(err, &ee) && ee.Code != engine.CodeInternal {
			return b.client.Thought(ctx, it.SessionID, chlinear.ActivityID(it.SessionID, "decision", it.EventKey), ee.Message, false)
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

// deliver renders the session's events after the cursor as activities.
func (b *linearBridge) deliver(ctx context.Context, s engine.Session, cursor *int64, save func() error) error {
	agentSession := strings.TrimPrefix(s.ThreadKey, "linear:")
	calls := map[string]string{} // call id -> one-line input, for action activities
	for {
		evs, err := b.eng.Events(ctx, s.ID, *cursor, 100)
		if err != nil || len(evs) == 0 {
			return err
		}
		for i, ev := range evs {
			next := ""
			if i+1 < len(evs) {
				next = evs[i+1].Type
			} else if ev.Type == engine.EventAgentMessage {
				// The model's text and its tool calls commit together, so
				// the next event, if it is a call, is already there.
				more, err := b.eng.Events(ctx, s.ID, ev.Seq, 1)
				if err != nil {
					return err
				}
				if len(more) > 0 {
					next = more[0].Type
				}
			}
			if err := b.render(ctx, agentSession, s, ev, next, calls); err != nil {
				return fmt.Errorf("render %s #%d: %w", ev.Type, ev.Seq, err)
			}
			*cursor = ev.Seq
			if err := save(); err != nil {
				return err
			}
		}
	}
}

func (b *linearBridge) render(ctx context.Context, agentSession string, s engine.Session, ev engine.Event, next string, calls map[string]string) error {
	id := chlinear.ActivityID(s.ID, fmt.Sprint(ev.Seq))
	payload, err := ev.Decode()
	if err != nil {
		// Retrying cannot make it readable: skip it rather than stall the thread.
		b.log.Warn("not delivering an unreadable event", logSession, s.ID, logErr, err)
		return nil
	}
	note := func(approvalID, detail string) error {
		text := fmt.Sprintf("Approval %s: %s.", approvalID, strings.TrimPrefix(ev.Type, "approval."))
		if detail != "" {
			text += " " + detail
		}
		return b.client.Thought(ctx, agentSession, id, text, false)
	}
	switch d := payload.(type) {
	case engine.AgentMessage:
		if strings.TrimSpace(d.Text) == "" {
			return nil
		}
		if next == engine.EventToolCall {
			return b.client.Thought(ctx, agentSession, id, d.Text, false)
		}
		return b.client.Response(ctx, agentSession, id, d.Text)
	case engine.ToolCall:
		calls[d.ID] = clipText(oneLine(string(d.Input)), 200)
	case engine.ToolCallResult:
		result := clipText(oneLine(d.Result.Text()), 300)
		if d.Result.IsError {
			result = "error: " + result
		}
		return b.client.Action(ctx, agentSession, id, d.Name, calls[d.CallID], result)
	case engine.ToolProgress:
		return b.client.Thought(ctx, agentSession, id, "Still working: "+d.Name+"…", true)
	case engine.Question:
		return b.client.Elicitation(ctx, agentSession, id, d.Text, chlinear.QuestionOptions(d))
	case engine.ApprovalRequested:
		a, err := b.eng.Approval(ctx, d.ApprovalID)
		if err != nil {
			return err
		}
		return b.client.Elicitation(ctx, agentSession, id, chlinear.ApprovalBody(a), chlinear.ApprovalOptions(a))
	case engine.ApprovalDecided:
		verb := "Approved"
		if d.Denied() {
			verb = "Denied"
		}
		return b.client.Thought(ctx, agentSession, id, fmt.Sprintf("%s by %s.", verb, d.By), false)
	case engine.ApplySucceeded:
		return note(d.ApprovalID, "")
	case engine.ApplyFailed:
		return note(d.ApprovalID, d.Error)
	case engine.ApplyUnconfirmed:
		return note(d.ApprovalID, d.Error)
	case engine.ApprovalExpiry:
		return note(d.ApprovalID, "")
	case engine.SessionError:
		if d.Code == engine.CodeInputCancelled {
			return nil
		}
		return b.client.Error(ctx, agentSession, id, fmt.Sprintf("%s: %s", d.Code, d.Message))
	case engine.TurnCompleted:
		if d.Outcome == engine.OutcomeMaxIterations {
			return b.client.Response(ctx, agentSession, id, "I stopped after the maximum number of tool rounds without a final answer. Send a message to continue.")
		}
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// renderFunc adapts a deliver method to bridge.Renderer.
type renderFunc func(ctx context.Context, s engine.Session, cursor *int64, save func() error) error

func (f renderFunc) Deliver(ctx context.Context, s engine.Session, cursor *int64, save func() error) error {
	return f(ctx, s, cursor, save)
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
