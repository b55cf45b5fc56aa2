package slackhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"brain/tools"
)

// socketReadLimit caps one Socket Mode frame, as DefaultMaxBody caps an
// HTTP request.
const socketReadLimit = 1 << 20

// Socket is a Socket Mode connection: NewSocket builds it, Run runs it.
type Socket struct{ client *socketmode.Client }

// NewSocket builds a Socket Mode client over api, which must carry the
// app-level token (xapp-...). It connects nothing until Run.
func NewSocket(api *slack.Client) *Socket {
	return &Socket{client: socketmode.New(api, socketmode.OptionReadLimit(socketReadLimit))}
}

// Run connects and records what arrives in inbox until ctx is canceled;
// see RunSocketMode. Run it once.
func (s *Socket) Run(ctx context.Context, inbox Inbox, botUserID string, log *slog.Logger) error {
	return RunSocketMode(ctx, s.client, inbox, botUserID, log)
}

// RunSocketMode runs a Socket Mode connection: it starts client.RunContext
// itself (callers must not run it too) and consumes client.Events, turning
// events_api and interactive requests into the same Items as the HTTP
// Handler. Each request is acked only after its Items are recorded; when the
// Inbox fails the request is left unacked so Slack delivers it again.
// Requests that cannot be parsed, slash commands and other types are acked
// and dropped. Requests are handled one at a time, in order.
//
// It returns nil once ctx is canceled, or the error that stopped the client
// (an invalid or revoked app token, for one).
func RunSocketMode(ctx context.Context, client *socketmode.Client, inbox Inbox, botUserID string, log *slog.Logger) error {
	if client == nil || inbox == nil {
		return errors.New("slack socket mode: client and inbox are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sr := socketRunner{client: client, inbox: inbox, botUserID: botUserID, log: log}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- client.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			<-runErr
			return nil
		case err := <-runErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack socket mode: %w", err)
		case evt := <-client.Events:
			sr.handleEvent(ctx, evt)
		}
	}
}

// socketRunner is what RunSocketMode's loop works with.
type socketRunner struct {
	client    *socketmode.Client
	inbox     Inbox
	botUserID string
	log       *slog.Logger
}

// handleEvent deals with one event from the client.
func (sr *socketRunner) handleEvent(ctx context.Context, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		if evt.Request != nil {
			sr.handleRequest(ctx, evt.Request)
		}
	case socketmode.EventTypeErrorBadMessage:
		// slack-go failed to decode the request (an inner event type it does
		// not know, say) and will not hand it over; decode the raw frame
		// ourselves so it is still recorded, or at least acked.
		bad, _ := evt.Data.(*socketmode.ErrorBadMessage)
		if bad == nil {
			return
		}
		var req socketmode.Request
		if err := json.Unmarshal(bad.Message, &req); err != nil || req.EnvelopeID == "" {
			sr.log.Warn("slack socket mode: unreadable frame", tools.LogErr, bad.Cause)
			return
		}
		sr.handleRequest(ctx, &req)
	case socketmode.EventTypeInvalidAuth:
		sr.log.Error("slack socket mode: invalid app token")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		sr.log.Warn("slack socket mode: connection trouble", tools.LogType, string(evt.Type), tools.LogErr, eventError(evt.Data))
	default: // connecting, connected, hello, disconnect
		sr.log.Debug("slack socket mode", tools.LogType, string(evt.Type))
	}
}

// handleRequest records a request's Items, then acks it.
func (sr *socketRunner) handleRequest(ctx context.Context, req *socketmode.Request) {
	log := sr.log.With(tools.LogEnvelopeID, req.EnvelopeID, tools.LogType, req.Type)
	if req.RetryAttempt > 0 {
		log = log.With(tools.LogRetryNum, req.RetryAttempt, tools.LogRetryReason, req.RetryReason)
	}
	items, err := socketItems(req, sr.botUserID)
	if err != nil {
		// Redelivery would fail the same way: ack it away.
		log.Warn("slack socket mode: request unparseable", tools.LogErr, err)
	}
	for _, it := range items {
		if _, err := sr.inbox.Record(ctx, it); err != nil {
			log.Error("slack item not recorded; leaving unacked", tools.LogThreadKey, it.ThreadKey, tools.LogErr, err)
			return
		}
	}
	if err := sr.client.AckCtx(ctx, req.EnvelopeID, nil); err != nil {
		log.Warn("slack socket mode: ack failed", tools.LogErr, err)
	}
}

// socketItems parses a Socket Mode request's payload with the same code the
// HTTP handler uses: an events_api payload is the Events API envelope, an
// interactive payload is the interaction JSON.
func socketItems(req *socketmode.Request, botUserID string) ([]Item, error) {
	switch req.Type {
	case socketmode.RequestTypeEventsAPI:
		res, err := ParseEvent(req.Payload, botUserID)
		if err != nil || res.Item == nil {
			return nil, err
		}
		return []Item{*res.Item}, nil
	case socketmode.RequestTypeInteractive:
		return parseInteractionPayload(req.Payload)
	}
	return nil, nil
}

// eventError digs the error out of a socketmode connection event.
func eventError(data any) error {
	switch d := data.(type) {
	case *socketmode.ErrorWriteFailed:
		return d.Cause
	case error:
		return d
	}
	return fmt.Errorf("%v", data)
}
