package githubhook

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"brain/tools"
)

// DefaultMaxBody caps a request body when Handler.MaxBody is not set
// (GitHub caps payloads at 25 MB; conversations are far smaller).
const DefaultMaxBody = 1 << 20

// Handler serves POST /github/webhook: it reads the raw body under a cap,
// verifies X-Hub-Signature-256 before parsing anything, records the Item
// in the Inbox and answers 200 (202 for a duplicate). Work happens after
// the answer; GitHub gives up after 10 s.
//
// Statuses: 405 not a POST, 413 body over MaxBody, 401 bad signature, 400
// a signed handled event with broken fields, 500 the Inbox failed, 200
// recorded or ignored (pings, other events, bots, Self's own comments),
// 202 a duplicate. Failures are http.Error text; brain mounts the handler
// where that becomes its JSON error envelope with X-Request-ID.
type Handler struct {
	Secret string // the webhook secret; with none every request is rejected
	Inbox  Inbox  // required
	// Self is the app's own login (e.g. "brain[bot]"): its comments are
	// ignored, so it never talks to itself.
	Self    string
	MaxBody int64        // <= 0: DefaultMaxBody
	Logger  *slog.Logger // nil: discard
}

var _ http.Handler = (*Handler)(nil)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, r.Method+" is not allowed; GitHub posts webhooks", http.StatusMethodNotAllowed)
		return
	}
	limit := h.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if r.ContentLength > limit {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "the request body could not be read", http.StatusBadRequest)
		}
		return
	}
	if err := Verify(h.Secret, r.Header.Get(HeaderSignature), body); err != nil {
		h.logger().Warn("github webhook rejected", append(reqAttrs(r), tools.LogErr, err)...)
		http.Error(w, "invalid X-Hub-Signature-256", http.StatusUnauthorized)
		return
	}
	it, ignored, err := ParseEvent(r.Header.Get(HeaderEvent), body)
	if err != nil {
		h.logger().Warn("github webhook unparseable", append(reqAttrs(r), tools.LogErr, err)...)
		http.Error(w, "the body is not a valid "+r.Header.Get(HeaderEvent)+" webhook", http.StatusBadRequest)
		return
	}
	if ignored == "" && h.Self != "" && strings.EqualFold(it.Author, h.Self) {
		ignored = "written by brain"
	}
	if ignored != "" {
		h.logger().Debug("github webhook ignored", append(reqAttrs(r), tools.LogIgnored, ignored)...)
		w.WriteHeader(http.StatusOK)
		return
	}
	it.DeliveryID = it.EventKey
	if d := r.Header.Get(HeaderDelivery); validID(d) {
		it.DeliveryID = d
	}
	if h.Inbox == nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	dup, err := h.Inbox.Record(r.Context(), it)
	if err != nil {
		h.logger().Error("github item not recorded", append(reqAttrs(r), tools.LogErr, err)...)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h.logger().Debug("github item recorded", append(reqAttrs(r), tools.LogKind, it.Kind, tools.LogDuplicate, dup)...)
	if dup {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// reqAttrs are the log attributes naming a request (header values are
// quoted: they are the sender's text).
func reqAttrs(r *http.Request) []any {
	attrs := []any{tools.LogPath, r.URL.Path}
	if d := r.Header.Get(HeaderDelivery); d != "" {
		attrs = append(attrs, tools.LogDelivery, quoteShort(d))
	}
	if e := r.Header.Get(HeaderEvent); e != "" {
		attrs = append(attrs, tools.LogEvent, quoteShort(e))
	}
	return attrs
}

func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.ToValidUTF8(s, "?")
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}
