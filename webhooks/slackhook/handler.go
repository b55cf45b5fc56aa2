package slackhook

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"brain/tools"
)

// DefaultMaxBody caps a request body when Handler.MaxBody is not set.
const DefaultMaxBody = 1 << 20

// Retry headers Slack adds to redeliveries.
const (
	HeaderRetryNum    = "X-Slack-Retry-Num"
	HeaderRetryReason = "X-Slack-Retry-Reason"
)

// Handler serves Slack's Events API and interactivity requests: it reads the
// raw body under a cap, verifies the signature before parsing anything,
// records each Item in the Inbox and acks with an empty 200. Work on the
// Items happens elsewhere, after the ack; Record must be quick (Slack waits
// 3 s).
//
// Statuses: 401 bad or stale signature, 413 body over MaxBody, 400 a signed
// body that is not valid JSON/form, 500 the Inbox failed (Slack retries),
// 200 recorded, duplicate or ignored. Retries (X-Slack-Retry-Num) are
// handled like first deliveries: a retry may be the only copy that arrives.
// Failures are answered with http.Error, a status and one line of text;
// brain mounts the handler where that becomes its JSON error envelope.
type Handler struct {
	SigningSecret string           // required; with none every request is rejected
	Inbox         Inbox            // required
	BotUserID     string           // the bot's user id (U...); see ParseEvent
	Clock         func() time.Time // nil: time.Now
	MaxBody       int64            // <= 0: DefaultMaxBody
	Logger        *slog.Logger     // nil: discard
}

var _ http.Handler = (*Handler)(nil)

// ServeHTTP routes by path suffix: ".../events" to Events, ".../interactions"
// to Interactions, anything else is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/events"):
		h.serveEvents(w, r)
	case strings.HasSuffix(r.URL.Path, "/interactions"):
		h.serveInteractions(w, r)
	default:
		http.Error(w, "no Slack endpoint at "+r.URL.Path+"; Slack posts to .../events and .../interactions", http.StatusNotFound)
	}
}

// Events returns the handler for the Events API request URL
// (/slack/events).
func (h *Handler) Events() http.Handler { return http.HandlerFunc(h.serveEvents) }

// Interactions returns the handler for the interactivity request URL
// (/slack/interactions).
func (h *Handler) Interactions() http.Handler { return http.HandlerFunc(h.serveInteractions) }

func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, ok := h.receive(w, r)
	if !ok {
		return
	}
	res, err := ParseEvent(body, h.BotUserID)
	if err != nil {
		h.logger().Warn("slack event unparseable", append(reqAttrs(r, ""), tools.LogErr, err)...)
		http.Error(w, "the body is not a Slack Events API request", http.StatusBadRequest)
		return
	}
	switch {
	case res.Challenge != "":
		out, _ := json.Marshal(struct {
			Challenge string `json:"challenge"`
		}{res.Challenge})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	case res.Item == nil:
		h.logger().Debug("slack event ignored", append(reqAttrs(r, res.EventID), tools.LogIgnored, res.Ignored)...)
		w.WriteHeader(http.StatusOK)
	default:
		h.record(w, r, res.EventID, []Item{*res.Item})
	}
}

func (h *Handler) serveInteractions(w http.ResponseWriter, r *http.Request) {
	body, ok := h.receive(w, r)
	if !ok {
		return
	}
	items, err := ParseInteraction(body)
	if err != nil {
		h.logger().Warn("slack interaction unparseable", append(reqAttrs(r, ""), tools.LogErr, err)...)
		http.Error(w, "the body is not a Slack interaction payload", http.StatusBadRequest)
		return
	}
	h.record(w, r, "", items)
}

// receive reads and verifies the body, answering the request itself when
// that fails.
func (h *Handler) receive(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, r.Method+" is not allowed; Slack posts", http.StatusMethodNotAllowed)
		return nil, false
	}
	limit := h.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if r.ContentLength > limit {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "the request body could not be read", http.StatusBadRequest)
		}
		return nil, false
	}
	now := time.Now
	if h.Clock != nil {
		now = h.Clock
	}
	if err := Verify(h.SigningSecret, r.Header, body, now()); err != nil {
		h.logger().Warn("slack request rejected", append(reqAttrs(r, ""), tools.LogErr, err)...)
		http.Error(w, "invalid or stale Slack request signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// record hands the Items to the Inbox and acks. Any failure is a 500 so
// Slack delivers again; Items recorded before it dedupe on the retry.
func (h *Handler) record(w http.ResponseWriter, r *http.Request, eventID string, items []Item) {
	if h.Inbox == nil {
		h.logger().Error("slack handler has no inbox", reqAttrs(r, eventID)...)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	for _, it := range items {
		dup, err := h.Inbox.Record(r.Context(), it)
		if err != nil {
			h.logger().Error("slack item not recorded", append(reqAttrs(r, eventID), tools.LogThreadKey, it.ThreadKey, tools.LogErr, err)...)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		if dup {
			h.logger().Debug("slack item was a duplicate", append(reqAttrs(r, eventID), tools.LogThreadKey, it.ThreadKey)...)
		}
	}
	w.WriteHeader(http.StatusOK)
}

// reqAttrs are the log attributes naming a request; built only when a
// line is logged.
func reqAttrs(r *http.Request, eventID string) []any {
	attrs := []any{tools.LogPath, r.URL.Path}
	if eventID != "" {
		attrs = append(attrs, tools.LogEventID, eventID)
	}
	if n := r.Header.Get(HeaderRetryNum); n != "" {
		attrs = append(attrs, tools.LogRetryNum, n, tools.LogRetryReason, r.Header.Get(HeaderRetryReason))
	}
	return attrs
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}
