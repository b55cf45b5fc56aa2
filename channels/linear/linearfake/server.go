// Package linearfake is a TEST DOUBLE: a fake Linear GraphQL API server for
// tests and demos. It is an httptest server answering POST /graphql with
// the two Agent API mutations brain uses, agentActivityCreate and
// agentSessionUpdate, passed with their inputs as variables (it does not
// parse GraphQL; anything else is answered with a GraphQL error). It keeps
// every activity per agent session, validates inputs the way Linear's
// documentation says Linear does, is idempotent on the client-chosen
// activity id, checks the Authorization header, and can answer GraphQL
// errors (with HTTP 200, as Linear does) or HTTP 5xx on demand. With
// EnableOAuth it is also an OAuth application: an authorize page, a token
// endpoint issuing short-lived access tokens and rotating refresh tokens,
// and the viewer query, per workspace (oauth.go). Issues, their teams'
// workflow states and attachments (one per URL) are in issues.go and
// attachments.go. It never reaches the
// network.
//
// It imports only the standard library; it must not import the project.
package linearfake

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Activity is an agent activity as the fake recorded it.
type Activity struct {
	// ID is the activity's id: ClientID when the client chose one, else one
	// the fake made up.
	ID       string
	ClientID string // the input's id, "" when none was sent
	// SessionID is the input's agentSessionId.
	SessionID string
	// Type is content.type: thought, action, elicitation, response, error.
	Type string
	// Body is content.body (thought, elicitation, response, error).
	Body string
	// Action, Parameter and Result are an action's content; HasResult is
	// false when no result was sent.
	Action, Parameter, Result string
	HasResult                 bool
	Signal                    string          // "" when none
	SignalMetadata            json.RawMessage // nil when none
	Ephemeral                 bool
	// Input is the raw input object exactly as the client sent it.
	Input json.RawMessage
}

// SessionUpdate is one agentSessionUpdate the fake applied.
type SessionUpdate struct {
	SessionID string
	Input     json.RawMessage // the raw input object
}

// Request is one request the fake received.
type Request struct {
	// Operation is the mutation the query calls ("agentActivityCreate",
	// "agentSessionUpdate"), "" when none was recognised.
	Operation     string
	Authorization string // the Authorization header as sent
	// Organization is the workspace of the OAuth token used, "" for the
	// static token or a refused request.
	Organization string
	Query        string
	Variables    json.RawMessage
	// Status is the HTTP status answered; ErrorCode the GraphQL error's
	// extensions.code, "" when the request succeeded.
	Status    int
	ErrorCode string
}

// Fault is a failure the fake answers instead of doing its work.
type Fault struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Code and Message make a GraphQL error body
	// {"errors":[{"message":...,"extensions":{"code":...}}]}; with Code ""
	// the body is plain text (a proxy's 502, say).
	Code, Message string
	// Header is added to the response (Retry-After, X-RateLimit-...).
	Header http.Header
	// AfterApply does the work first (recording the activity) and then
	// answers the fault, like a response lost on the way back.
	AfterApply bool
	// Op, when set, limits the fault to requests of that mutation
	// ("attachmentCreate"); others pass untouched.
	Op string
}

type fault struct {
	Fault
	n int // requests left
}

// Server is the fake Linear GraphQL API. Safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	token string

	mu         sync.Mutex
	activities map[string][]Activity // by session, in order
	byID       map[string]Activity
	updates    []SessionUpdate
	requests   []Request
	faults     []*fault
	// viewerFaults answer viewer queries (readiness probes); see FailViewer.
	viewerFaults []*fault
	changed      chan struct{} // closed and replaced on every recorded activity
	oauth        oauth
	issues       map[string]*Issue
	comments     []Comment
	// teams holds each team's workflow states; attachments each issue's
	// attachments (one per URL).
	teams       map[string][]WorkflowState
	attachments []Attachment
}

// New starts a fake that accepts token the way Linear does: personal API
// keys (lin_api_...) as the raw Authorization header, every other token
// (OAuth access tokens) as "Authorization: Bearer <token>". Close it when
// done.
func New(token string) *Server {
	s := &Server{
		token:      token,
		activities: map[string][]Activity{},
		byID:       map[string]Activity{},
		changed:    make(chan struct{}),
		oauth: oauth{
			orgs: map[string]Organization{}, codes: map[string]code{},
			access: map[string]*grant{}, refresh: map[string]*grant{}, refreshes: map[string]int{},
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/graphql", s.serve)
	mux.HandleFunc("GET /oauth/authorize", s.serveAuthorize)
	mux.HandleFunc("/oauth/token", s.serveToken)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the GraphQL endpoint: the server's base URL + "/graphql".
func (s *Server) URL() string { return s.srv.URL + "/graphql" }

// Close shuts the server down and closes its connections.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Inject makes the next n requests answer f.
func (s *Server) Inject(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{Fault: f, n: n})
}

// FailGraphQL makes the next n requests answer HTTP 200 with a GraphQL
// error of code (e.g. "INTERNAL_ERROR", "INVALID_INPUT").
func (s *Server) FailGraphQL(n int, code, message string) {
	s.Inject(n, Fault{Code: code, Message: message})
}

// RateLimit makes the next n requests answer HTTP 200 with a RATELIMITED
// GraphQL error, a Retry-After of retryAfter (whole seconds, rounded up)
// and X-RateLimit-Requests-Reset (epoch milliseconds) that far ahead.
func (s *Server) RateLimit(n int, retryAfter time.Duration) {
	h := http.Header{}
	h.Set("Retry-After", strconv.FormatInt(int64((retryAfter+time.Second-1)/time.Second), 10))
	h.Set("X-RateLimit-Requests-Limit", "5000")
	h.Set("X-RateLimit-Requests-Remaining", "0")
	h.Set("X-RateLimit-Requests-Reset", strconv.FormatInt(time.Now().Add(retryAfter).UnixMilli(), 10))
	s.Inject(n, Fault{Code: "RATELIMITED", Message: "Rate limit exceeded", Header: h})
}

// FailHTTP makes the next n requests answer status with a plain-text body.
func (s *Server) FailHTTP(n, status int) {
	s.Inject(n, Fault{Status: status, Message: http.StatusText(status)})
}

// Activities returns the activities of an agent session in creation order.
func (s *Server) Activities(sessionID string) []Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.activities[sessionID])
}

// WaitActivities waits until the session has at least n activities and
// returns them, or returns ctx's error with those it has.
func (s *Server) WaitActivities(ctx context.Context, sessionID string, n int) ([]Activity, error) {
	for {
		s.mu.Lock()
		got, ch := slices.Clone(s.activities[sessionID]), s.changed
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-ch:
		}
	}
}

// SessionUpdates returns the agentSessionUpdate inputs applied to a session.
func (s *Server) SessionUpdates(sessionID string) []SessionUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SessionUpdate
	for _, u := range s.updates {
		if u.SessionID == sessionID {
			out = append(out, u)
		}
	}
	return out
}

// Requests returns every request received, failed ones included, in
// arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// authorized reports whether the Authorization header carries the static
// token the way Linear expects it, or an OAuth access token still valid;
// org is the OAuth token's workspace ("" for the static token).
func (s *Server) authorized(h string) (org string, ok bool) {
	if s.token != "" && strings.HasPrefix(s.token, "lin_api_") && h == s.token {
		return "", true
	}
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") { // the scheme is case-insensitive (RFC 9110)
		return "", false
	}
	if s.token != "" && !strings.HasPrefix(s.token, "lin_api_") && cred == s.token {
		return "", true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.organizationOf(cred)
}

// nextFault takes one fault for a request of op off the queue, nil when
// none applies.
func (s *Server) nextFault(op string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = slices.DeleteFunc(s.faults, func(f *fault) bool { return f.n <= 0 })
	for _, f := range s.faults {
		if f.Op != "" && f.Op != op {
			continue
		}
		f.n--
		out := f.Fault
		return &out
	}
	return nil
}

func (s *Server) logRequest(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}
