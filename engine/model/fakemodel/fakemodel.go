// Package fakemodel is a scripted fake model server: a TEST DOUBLE that
// speaks enough of the Anthropic Messages API (POST /v1/messages, streaming
// and not) and the OpenAI Chat Completions API (POST /v1/chat/completions)
// for the real SDK clients to talk to it. Tests script its answers with
// Push, and assert on the requests it recorded; the daemon mounts NewHandler
// in demo mode so brain runs without a model provider.
//
// It never calls a real model. It imports nothing of brain.
package fakemodel

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"brain/tools"
)

// Provider names, as recorded in Request.Provider.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// DefaultRecordLimit is how many requests a handler keeps unless
// WithRecordLimit says otherwise; older ones are dropped so a benchmark or a
// long demo does not grow without bound.
const DefaultRecordLimit = 1024

// maxBody caps a request body; larger bodies are refused.
const maxBody = 32 << 20

// Log messages and attribute keys. Every line names the test double so
// nobody mistakes demo output for a real model.
const (
	logPrefix = "fake model server (test double): "
)

// Request is one request the fake model server (test double) received,
// decoded into a provider-neutral shape.
type Request struct {
	Provider string // ProviderAnthropic or ProviderOpenAI
	Model    string
	// System is the system prompt: Anthropic's system field, or the
	// concatenated system/developer messages of an OpenAI request.
	System string
	// Messages is the messages array exactly as sent.
	Messages json.RawMessage
	// Tools are the names of the tools offered.
	Tools  []string
	Stream bool
	// APIKey is the key the client sent (x-api-key or a bearer token).
	APIKey string
	Header http.Header
	// Raw is the whole request body.
	Raw []byte
}

// Option configures a Handler.
type Option func(*Handler)

// WithLogger logs each request at debug level; without it nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(h *Handler) { h.log = l } }

// WithRecordLimit keeps the n most recent requests; n < 0 keeps all, 0 none
// (Received and WaitRequests still count them).
func WithRecordLimit(n int) Option { return func(h *Handler) { h.limit = n } }

// WithDefault sets the step used when the script is empty (default Echo).
func WithDefault(s Step) Option { return func(h *Handler) { h.def = s } }

// Handler is the fake model server (test double) as an http.Handler. It
// routes on the path suffix (/v1/messages, /chat/completions), so it can be
// mounted under any prefix. It is safe for concurrent use.
type Handler struct {
	log   *slog.Logger
	limit int
	desk  *demoDesk // the demo endpoint; nil unless WithDemo
	// window and noCache: see WithContextWindow and WithoutCache.
	window  int
	noCache bool

	mu       sync.Mutex
	script   []Step
	def      Step
	requests []Request // a ring once len reaches limit
	received int
	ids      uint64
	changed  chan struct{} // closed on the next request; made only when someone waits
	release  chan struct{} // closed by Release; made only when a Hold waits
	done     chan struct{} // closed by Close
	closed   bool
	cache    map[[32]byte]bool // prefixes in the simulated prompt cache
}

// NewHandler returns a fake model server (test double) handler. Call Close
// when done with it, to release requests held by Block or Hold.
func NewHandler(opts ...Option) *Handler {
	h := &Handler{
		log:   slog.New(slog.DiscardHandler),
		limit: DefaultRecordLimit,
		def:   Echo(),
		done:  make(chan struct{}),
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Push appends steps to the script; each request takes the first one.
func (h *Handler) Push(steps ...Step) {
	h.mu.Lock()
	h.script = append(h.script, steps...)
	h.mu.Unlock()
}

// SetDefault sets the step answered when the script is empty.
func (h *Handler) SetDefault(s Step) {
	h.mu.Lock()
	h.def = s
	h.mu.Unlock()
}

// Pending reports how many scripted steps are not yet used.
func (h *Handler) Pending() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.script)
}

// Received reports how many requests arrived, recorded or not.
func (h *Handler) Received() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.received
}

// Requests returns the recorded requests, oldest first.
func (h *Handler) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requestsLocked()
}

func (h *Handler) requestsLocked() []Request {
	n := len(h.requests)
	out := make([]Request, 0, n)
	if h.limit <= 0 || n < h.limit {
		return append(out, h.requests...)
	}
	start := h.received % n
	out = append(out, h.requests[start:]...)
	return append(out, h.requests[:start]...)
}

// WaitRequests waits until at least n requests have arrived and returns the
// recorded ones.
func (h *Handler) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		h.mu.Lock()
		if h.received >= n {
			reqs := h.requestsLocked()
			h.mu.Unlock()
			return reqs, nil
		}
		if h.changed == nil {
			h.changed = make(chan struct{})
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Release lets every request that has taken a Hold step go on, including
// one that has arrived but not yet started waiting.
func (h *Handler) Release() {
	h.mu.Lock()
	if h.release != nil {
		close(h.release)
		h.release = nil
	}
	h.mu.Unlock()
}

// Close releases every held request (they end without an answer) and makes
// later Block and Hold steps return at once. It is safe to call twice.
func (h *Handler) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// record stores req and takes the step that answers it, in one critical
// section so that the script is consumed in arrival order.
func (h *Handler) record(req Request, takeStep bool) Step {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.limit < 0 || len(h.requests) < h.limit:
		h.requests = append(h.requests, req)
	case h.limit > 0:
		h.requests[h.received%h.limit] = req
	}
	h.received++
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
	if !takeStep {
		return Step{}
	}
	return h.nextLocked()
}

func (h *Handler) next() Step {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nextLocked()
}

func (h *Handler) nextLocked() Step {
	if len(h.script) == 0 {
		return h.holdLocked(h.def)
	}
	s := h.script[0]
	h.script[0] = Step{} // drop references held by the consumed step
	h.script = h.script[1:]
	return h.holdLocked(s)
}

// holdLocked ties a Hold step to the current release channel as soon as a
// request takes it, so a Release that follows WaitRequests frees it even if
// the handler has not started waiting yet.
func (h *Handler) holdLocked(s Step) Step {
	if s.kind != kindHold {
		return s
	}
	if h.release == nil {
		h.release = make(chan struct{})
	}
	s.wait = h.release
	return s
}

func (h *Handler) newID() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids++
	return h.ids
}

// resolve runs waiting and function steps until one that answers. It
// reports false when the request was cancelled or the handler closed first.
func (h *Handler) resolve(ctx context.Context, s Step, req Request) (Step, bool) {
	for {
		switch s.kind {
		case kindFunc:
			s = s.fn(req) // unlocked: fn may call Push
			h.mu.Lock()
			s = h.holdLocked(s)
			h.mu.Unlock()
		case kindBlock, kindHold:
			select {
			case <-s.wait:
			case <-ctx.Done():
				return Step{}, false
			case <-h.done:
				return Step{}, false
			}
			s = h.next()
		default:
			return s, true
		}
	}
}

// ServeHTTP answers Anthropic and OpenAI requests from the script.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.desk != nil && h.desk.serve(w, r) {
		return
	}
	var p provider
	switch {
	case strings.HasSuffix(r.URL.Path, "/v1/messages"):
		p = anthropicAPI{}
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		p = openaiAPI{}
	default:
		http.Error(w, "fake model server (test double): unknown path "+r.URL.Path, http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		p.writeError(w, http.StatusMethodNotAllowed, "fake model server (test double): POST only")
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		p.writeError(w, http.StatusRequestEntityTooLarge, "fake model server (test double): "+err.Error())
		return
	}
	req, err := p.decode(raw)
	req.Raw = raw
	req.Header = r.Header.Clone()
	req.APIKey = apiKey(r.Header)
	ctx := r.Context()
	if err != nil {
		h.record(req, false)
		h.log.DebugContext(ctx, logPrefix+"bad request", tools.LogPath, r.URL.Path, tools.LogErr, err)
		p.writeError(w, http.StatusBadRequest, "fake model server (test double): "+err.Error())
		return
	}
	step := h.record(req, true)
	h.log.DebugContext(ctx, logPrefix+"request",
		tools.LogProvider, req.Provider, tools.LogModel, req.Model, tools.LogStream, req.Stream)

	step, ok := h.resolve(ctx, step, req)
	if !ok {
		h.log.DebugContext(ctx, logPrefix+"request ended while held", tools.LogProvider, req.Provider)
		p.writeError(w, http.StatusServiceUnavailable, "fake model server (test double): request ended while held")
		return
	}
	if n := promptTokens(req); step.kind == kindContextTooLong || h.window > 0 && n > h.window && (step.kind == kindAnswer || step.kind == kindEcho) {
		window := h.window
		if step.kind == kindContextTooLong && (window <= 0 || window >= n) {
			window = n - 1
		}
		writeContextError(w, req, n, window)
		return
	}
	switch step.kind {
	case kindFail:
		p.writeError(w, validStatus(step.status), step.message)
	case kindFailMidStream:
		p.writeMidStreamError(w, req, validStatus(step.status), step.message)
	case kindDisconnect:
		// The server recovers this panic by closing the connection unanswered.
		panic(http.ErrAbortHandler)
	case kindEcho:
		p.writeAnswer(w, h, req, answer{text: "echo: " + p.lastUserText(req.Messages), ctx: ctx})
	default:
		p.writeAnswer(w, h, req, answer{text: step.text, calls: step.calls, pace: step.pace, ctx: ctx})
	}
}

// answer is a resolved Text/ToolCalls step.
type answer struct {
	text  string
	calls []Call
	pace  *pacing         // nil: not slowed down
	ctx   context.Context // the request's, ends a slow answer early
}

// provider is one wire dialect.
type provider interface {
	decode(raw []byte) (Request, error)
	lastUserText(messages json.RawMessage) string
	writeAnswer(w http.ResponseWriter, h *Handler, req Request, a answer)
	writeError(w http.ResponseWriter, status int, message string)
	writeMidStreamError(w http.ResponseWriter, req Request, status int, message string)
}

func apiKey(hdr http.Header) string {
	if k := hdr.Get("X-Api-Key"); k != "" {
		return k
	}
	if v, ok := strings.CutPrefix(hdr.Get("Authorization"), "Bearer "); ok {
		return v
	}
	return ""
}

// retryable reports whether the SDKs retry status; the fake then asks for
// an immediate retry.
func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// validStatus keeps a mistyped Fail status from panicking in WriteHeader.
func validStatus(status int) int {
	if status < 100 || status > 999 {
		return http.StatusInternalServerError
	}
	return status
}

func setErrorHeaders(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	if retryable(status) {
		w.Header().Set("Retry-After-Ms", "0")
	}
}

// Server is the fake model server (test double) on a local httptest
// listener.
type Server struct {
	*Handler
	srv *httptest.Server
}

// New starts a fake model server (test double) on 127.0.0.1. Close it.
func New(opts ...Option) *Server {
	h := NewHandler(opts...)
	return &Server{Handler: h, srv: httptest.NewServer(h)}
}

// URL is the server's root, e.g. http://127.0.0.1:41234. It is the
// Anthropic base URL (the SDK appends v1/messages).
func (s *Server) URL() string { return s.srv.URL }

// OpenAIBaseURL is the OpenAI-compatible base URL (the SDK appends
// chat/completions).
func (s *Server) OpenAIBaseURL() string { return s.srv.URL + "/v1/" }

// Close releases held requests, then stops the server and waits for its
// handlers. It is safe to call twice.
func (s *Server) Close() {
	s.Handler.Close()
	s.srv.Close()
}
