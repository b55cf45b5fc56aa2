package linearhook

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"brain/tools"
)

// DefaultMaxBody caps a request body when Handler.MaxBody is not set.
const DefaultMaxBody = 1 << 20

// Handler serves Linear's webhook endpoint (/linear/webhook): it reads the
// raw body under a cap, verifies signature and timestamp before parsing
// anything, records the Item in the Inbox and answers an empty 200. Work on
// the Item happens elsewhere, after the answer: Linear wants it within 5 s
// and retries failed deliveries (after about 1 min, 1 h and 6 h).
//
// Statuses: 405 not a POST, 413 body over MaxBody, 401 bad signature or
// stale timestamp, 400 a signed AgentSessionEvent with broken fields, 500
// the Inbox failed (Linear retries), 200 recorded, duplicate or ignored
// (other webhook types and actions are acknowledged so Linear does not
// retry or disable the endpoint). Failures are answered with http.Error, a
// status and one line of text; brain mounts the handler where that becomes
// its JSON error envelope.
type Handler struct {
	Secret  string           // the webhook signing secret; with none every request is rejected
	Inbox   Inbox            // required
	Clock   func() time.Time // nil: time.Now
	MaxBody int64            // <= 0: DefaultMaxBody
	Logger  *slog.Logger     // nil: discard
}

var _ http.Handler = (*Handler)(nil)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, r.Method+" is not allowed; Linear posts webhooks", http.StatusMethodNotAllowed)
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	now := time.Now
	if h.Clock != nil {
		now = h.Clock
	}
	if err := Verify(h.Secret, r.Header.Get(HeaderSignature), body, now()); err != nil {
		h.logger().Warn("linear webhook rejected", append(reqAttrs(r), tools.LogErr, err)...)
		http.Error(w, "invalid Linear-Signature or stale webhookTimestamp", http.StatusUnauthorized)
		return
	}
	it, ignored, err := ParseEvent(body)
	if err != nil {
		h.logger().Warn("linear webhook unparseable", append(reqAttrs(r), tools.LogErr, err)...)
		http.Error(w, "the body is not a valid AgentSessionEvent webhook", http.StatusBadRequest)
		return
	}
	if ignored != "" {
		h.logger().Debug("linear webhook ignored", append(reqAttrs(r), tools.LogIgnored, ignored)...)
		w.WriteHeader(http.StatusOK)
		return
	}
	if d := r.Header.Get(HeaderDelivery); validID(d) {
		it.DeliveryID = d
	}
	if h.Inbox == nil {
		h.logger().Error("linear handler has no inbox", reqAttrs(r)...)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	dup, err := h.Inbox.Record(r.Context(), it)
	if err != nil {
		h.logger().Error("linear item not recorded", append(reqAttrs(r), tools.LogThreadKey, it.ThreadKey, tools.LogErr, err)...)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h.logger().Debug("linear item recorded", append(reqAttrs(r), tools.LogThreadKey, it.ThreadKey, tools.LogKind, it.Kind, tools.LogDuplicate, dup)...)
	w.WriteHeader(http.StatusOK)
}

// readBody reads the body under the cap, answering the request itself when
// that fails.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
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
	return body, true
}

// reqAttrs are the log attributes naming a request.
func reqAttrs(r *http.Request) []any {
	attrs := []any{tools.LogPath, r.URL.Path}
	if d := r.Header.Get(HeaderDelivery); d != "" {
		attrs = append(attrs, tools.LogDelivery, quote(d))
	}
	if e := r.Header.Get(HeaderEvent); e != "" {
		attrs = append(attrs, tools.LogEvent, quote(e))
	}
	return attrs
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}
