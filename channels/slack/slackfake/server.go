// Package slackfake is a TEST DOUBLE: a fake Slack Web API server for tests.
// It is an httptest server that the real slack-go client talks to through
// slack.OptionAPIURL(fake.URL() + "/api/"). It keeps every message it was
// sent (with updates applied), checks Block Kit limits the way Slack rejects
// them, and can answer 429 or API errors on demand. It never reaches the
// network and starts no goroutine of its own beyond the httptest server.
//
// It imports only the standard library; it must not import the project.
package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The bot identity auth.test reports.
const (
	BotUserID = "U0BRAIN"
	BotID     = "B0BRAIN"
	TeamID    = "T0FAKE"
)

// Message is a message as the fake holds it now (updates applied).
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	// Blocks is the raw JSON array of blocks, nil when none were sent.
	Blocks json.RawMessage
	// User is the recipient of an ephemeral message.
	User string
	// Updates counts chat.update calls applied to the message.
	Updates int
	// Author, BotID and Username are who wrote a message AddMessage
	// seeded; a message the bot posted has none (it reads as the bot's).
	Author   string
	BotID    string
	Username string
	// Files are the files shared with a seeded message.
	Files []File
	// Streamed marks a message made by chat.startStream; Streaming is true
	// until chat.stopStream. Appends counts chat.appendStream calls and
	// Chunks holds every chunk sent to it (task and plan updates), in
	// order.
	Streamed  bool
	Streaming bool
	Appends   int
	Chunks    []json.RawMessage
}

// Call is one request the fake received.
type Call struct {
	Method string
	Params url.Values
	// Status is the HTTP status answered (429 when rate limited).
	Status int
	// Error is the Slack error code answered, "" when ok.
	Error string
	// At is when the fake answered (its own clock, the wall time), for
	// measurements.
	At time.Time
}

type fault struct {
	n          int // calls left; < 0 means every call
	retryAfter time.Duration
	code       string // "" for a 429
	after      bool   // the call takes effect, then the error is answered
}

type threadKey struct{ channel, ts string }

// Server is the fake Slack Web API. Safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu          sync.Mutex
	seq         int64       // ts source
	posted      int         // chat.postMessage successes
	order       []threadKey // post order of live messages
	messages    map[threadKey]*Message
	ephemerals  []Message
	statuses    map[threadKey]string
	calls       []Call
	faults      map[string][]*fault
	changed     chan struct{} // closed and replaced on every recorded change
	oidc        *oidc         // nil until EnableOIDC
	views       []View
	agents      map[threadKey]string   // agents.sessions.setStatus
	titles      map[threadKey]string   // assistant.threads.setTitle
	prompts     map[threadKey][]Prompt // assistant.threads.setSuggestedPrompts
	code        codeChannels           // agents.conversations.*: codechannel.go
	fakeContent                        // users, files, groups, views: content.go
}

// New starts a fake server; Close it when done.
func New() *Server {
	s := &Server{
		messages:    map[threadKey]*Message{},
		statuses:    map[threadKey]string{},
		faults:      map[string][]*fault{},
		changed:     make(chan struct{}),
		agents:      map[threadKey]string{},
		titles:      map[threadKey]string{},
		prompts:     map[threadKey][]Prompt{},
		fakeContent: newContent(),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's base URL; the API lives under URL()+"/api/".
func (s *Server) URL() string { return s.srv.URL }

// Close shuts the server down and closes its connections.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Messages returns the live messages of a channel in post order.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, k := range s.order {
		if k.channel == channel {
			out = append(out, *s.messages[k])
		}
	}
	return out
}

// Message returns one live message.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[threadKey{channel, ts}]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Thread returns the thread's parent (when the fake has it) and its
// replies in post order.
func (s *Server) Thread(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threadLocked(channel, threadTS)
}

func (s *Server) threadLocked(channel, threadTS string) []Message {
	var out []Message
	for _, k := range s.order {
		m := s.messages[k]
		if k.channel == channel && (m.TS == threadTS || m.ThreadTS == threadTS) {
			out = append(out, *m)
		}
	}
	return out
}

// Ephemerals returns every ephemeral message in post order.
func (s *Server) Ephemerals() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemerals)
}

// Status returns the assistant thread status last set ("" when cleared).
func (s *Server) Status(channel, threadTS string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statuses[threadKey{channel, threadTS}]
}

// Calls returns every call of method, including rate-limited and failed
// ones, in arrival order; "" returns all calls.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// WaitMessages waits until at least n messages were posted in total (all
// channels, deleted ones included) or ctx ends.
func (s *Server) WaitMessages(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, ch := s.posted, s.changed
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d messages, have %d: %w", n, got, ctx.Err())
		case <-ch:
		}
	}
}

// notifyLocked wakes waiters; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == AuthorizePath {
		s.authorize(w, r)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok {
		s.serveFile(w, r)
		return
	}
	params, err := readParams(r)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	status, retryAfter, resp := s.handle(method, params, r.Header.Get("Authorization") != "")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, status, resp)
}

// handle answers one call and records it.
func (s *Server) handle(method string, params url.Values, bearer bool) (status int, retryAfter string, resp map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.notifyLocked()
	call := Call{Method: method, Params: params, Status: http.StatusOK, At: time.Now()}
	switch f := s.takeFaultLocked(method); {
	case f != nil && f.code == "":
		call.Status, call.Error = http.StatusTooManyRequests, "ratelimited"
		retryAfter = fmt.Sprint(int64(math.Ceil(f.retryAfter.Seconds())))
		resp = apiError("ratelimited")
	case f != nil && f.after:
		s.dispatchLocked(method, params)
		resp = apiError(f.code)
	case f != nil:
		resp = apiError(f.code)
	case params.Get("token") == "" && !bearer && method != "openid.connect.token": // the client secret authenticates it
		resp = apiError("not_authed")
	default:
		resp = s.dispatchLocked(method, params)
	}
	if resp["ok"] == false && call.Error == "" {
		call.Error, _ = resp["error"].(string)
	}
	s.calls = append(s.calls, call)
	return call.Status, retryAfter, resp
}

func (s *Server) dispatchLocked(method string, p url.Values) map[string]any {
	switch method {
	case "auth.test":
		return map[string]any{"ok": true, "url": "https://fake.slack.test/", "team": "Fake",
			"user": "brain", "team_id": TeamID, "user_id": BotUserID, "bot_id": BotID}
	case "chat.postMessage":
		return s.postLocked(p)
	case "openid.connect.token":
		return s.tokenLocked(p)
	case "chat.update":
		return s.updateLocked(p)
	case "chat.postEphemeral":
		return s.ephemeralLocked(p)
	case "chat.delete":
		return s.deleteLocked(p)
	case "views.open":
		return s.viewsOpenLocked(p)
	case "conversations.open":
		return s.conversationsOpenLocked(p)
	case "assistant.threads.setStatus":
		if p.Get("channel_id") == "" || p.Get("thread_ts") == "" {
			return apiError("invalid_arguments")
		}
		s.statuses[threadKey{p.Get("channel_id"), p.Get("thread_ts")}] = p.Get("status")
		return map[string]any{"ok": true}
	case "conversations.replies":
		return s.repliesLocked(p)
	default:
		return s.agentLocked(method, p)
	}
}

// content checks text and blocks the way chat.postMessage/update do.
func content(p url.Values) (json.RawMessage, string) {
	text, rawBlocks := p.Get("text"), p.Get("blocks")
	if len([]rune(text)) > maxText {
		return nil, "msg_too_long"
	}
	if rawBlocks == "" {
		if text == "" {
			return nil, "no_text"
		}
		return nil, ""
	}
	if code := checkBlocks(rawBlocks); code != "" {
		return nil, code
	}
	if text == "" && rawBlocks == "[]" {
		return nil, "no_text"
	}
	return json.RawMessage(rawBlocks), ""
}

func (s *Server) nextTSLocked() string {
	s.seq++
	micros := s.seq * 100
	return fmt.Sprintf("%d.%06d", 1700000000+micros/1_000_000, micros%1_000_000)
}

func (s *Server) postLocked(p url.Values) map[string]any {
	channel := p.Get("channel")
	if channel == "" {
		return apiError("channel_not_found")
	}
	if c, ok := s.code.byID[channel]; ok && c.Archived {
		return apiError("is_archived")
	}
	blocks, code := content(p)
	if code != "" {
		return apiError(code)
	}
	m := &Message{Channel: channel, TS: s.nextTSLocked(), ThreadTS: p.Get("thread_ts"), Text: p.Get("text"), Blocks: blocks}
	k := threadKey{channel, m.TS}
	s.messages[k] = m
	s.order = append(s.order, k)
	s.posted++
	return map[string]any{"ok": true, "channel": channel, "ts": m.TS, "message": wire(*m)}
}

func (s *Server) updateLocked(p url.Values) map[string]any {
	m, ok := s.messages[threadKey{p.Get("channel"), p.Get("ts")}]
	if !ok {
		return apiError("message_not_found")
	}
	blocks, code := content(p)
	if code != "" {
		return apiError(code)
	}
	if _, ok := p["text"]; ok {
		m.Text = p.Get("text")
	}
	if _, ok := p["blocks"]; ok {
		m.Blocks = blocks
	}
	m.Updates++
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text, "message": wire(*m)}
}

func (s *Server) ephemeralLocked(p url.Values) map[string]any {
	if p.Get("channel") == "" {
		return apiError("channel_not_found")
	}
	if p.Get("user") == "" {
		return apiError("user_not_in_channel")
	}
	blocks, code := content(p)
	if code != "" {
		return apiError(code)
	}
	m := Message{Channel: p.Get("channel"), TS: s.nextTSLocked(), ThreadTS: p.Get("thread_ts"),
		Text: p.Get("text"), Blocks: blocks, User: p.Get("user")}
	s.ephemerals = append(s.ephemerals, m)
	return map[string]any{"ok": true, "message_ts": m.TS}
}

func (s *Server) deleteLocked(p url.Values) map[string]any {
	k := threadKey{p.Get("channel"), p.Get("ts")}
	if _, ok := s.messages[k]; !ok {
		return apiError("message_not_found")
	}
	delete(s.messages, k)
	s.order = slices.DeleteFunc(s.order, func(o threadKey) bool { return o == k })
	return map[string]any{"ok": true, "channel": k.channel, "ts": k.ts}
}

// wire is a message in Slack's JSON shape.
func wire(m Message) map[string]any {
	out := map[string]any{"type": "message", "text": m.Text, "ts": m.TS, "user": BotUserID, "bot_id": BotID, "team": TeamID}
	if m.Author != "" || m.BotID != "" {
		out["user"], out["bot_id"] = m.Author, m.BotID
		if m.Author == "" {
			delete(out, "user")
		}
		if m.BotID == "" {
			delete(out, "bot_id")
		} else {
			out["subtype"] = "bot_message"
		}
	}
	if m.Username != "" {
		out["username"] = m.Username
	}
	if len(m.Files) > 0 {
		files := make([]any, len(m.Files))
		for i, f := range m.Files {
			files[i] = f.Wire()
		}
		out["files"] = files
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.Blocks != nil {
		out["blocks"] = m.Blocks
	}
	return out
}

func apiError(code string) map[string]any { return map[string]any{"ok": false, "error": code} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readParams reads form, query or JSON parameters alike; JSON values that
// are not strings are kept as their JSON text (blocks arrive that way).
func readParams(r *http.Request) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		return r.Form, nil
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return nil, err
	}
	p := r.URL.Query()
	for k, raw := range body {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			p.Set(k, str)
		} else {
			p.Set(k, string(raw))
		}
	}
	return p, nil
}
