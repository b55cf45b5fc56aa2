// Package api serves brain's HTTP API: the sessions, approvals and
// schedules REST routes under /v1, /livez (/healthz), /readyz and /metrics, with the request
// id, error envelope, bearer keys and strict JSON decoding every route
// shares. Handlers mounted beside it (the webhooks, see Mount) get the same
// request ids and error envelope, without the keys.
//
// It works on the small interfaces it declares (Engine, Schedules) and on
// plain values, so it never imports a store, a channel, a webhook or the
// bot that wires them (bot/layering_test.go checks it).
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"brain/bot/config"
	"brain/bot/telemetry"
	"brain/engine"
	"brain/internal/keyguard"
	"brain/store"
	"brain/tools"
)

// Engine is what the handlers ask of the engine; *engine.Engine has it.
type Engine interface {
	Stats() engine.Stats
	engine.Starter
	engine.Sessions
	engine.Turns
	Results(ctx context.Context, sessionID string) ([]engine.ResultRecord, error)
	engine.Log
	engine.Changes
	engine.Deltas
	engine.Approvals
	// SessionUsage sums the tokens of a session's model calls.
	SessionUsage(ctx context.Context, sessionID string) (engine.Usage, error)
	// Compact compacts a session's context now.
	Compact(ctx context.Context, sessionID string) (engine.ContextCompacted, error)
}

// Config is what New needs.
type Config struct {
	Engine    Engine
	Schedules Schedules
	Logger    *slog.Logger
	// APIKeys are the bearer keys /v1 and /metrics accept. With none, no key
	// is asked, and only loopback callers no proxy forwarded are served.
	APIKeys []config.APIKey
	// Keys checks APIKeys and throttles wrong ones; the console's key
	// sign-in shares it (one budget of guesses, one metric). Nil: a guard
	// of APIKeys of the API's own.
	Keys *keyguard.Guard
	// MaxBodyBytes caps every request body (413 too_large above it).
	MaxBodyBytes int64
	// WriteTimeout is the HTTP server's write timeout (0 = none). Event
	// streams outlive it by moving their write deadline before each write.
	WriteTimeout time.Duration
	// DefaultAgent runs sessions created without an agent.
	DefaultAgent string
	// Metrics is the registry /metrics writes; the API adds its own
	// families to it. Nil: a registry of the API's metrics only.
	Metrics *telemetry.Registry
	// Done, once closed, ends long-lived responses (event streams), so a
	// server shutdown need not wait for them.
	Done <-chan struct{}
	// Prices are the prices of each agent's model (by agent name), for the
	// estimated cost in a session's usage; an agent without is not priced.
	Prices map[string]*config.PriceConfig
	// Clock tells the time for throttling wrong keys and records of
	// people and connections; nil is time.Now.
	Clock func() time.Time
	// Accounts keeps people and connections (the /v1/people and
	// /v1/connections routes); nil answers them 404.
	Accounts Accounts
	// Audit, when set, records each API key's writes (every method but
	// GET and HEAD) by the key's name; a write that cannot be recorded is
	// refused.
	Audit Auditor
	// Budgets, when set, serves /v1/budgets.
	Budgets Budgets
	// Memory keeps agents' memory files (the /v1/memory routes); nil
	// answers them 404.
	Memory store.Memory
	// Connector starts connect flows (POST /v1/connections/connect); nil
	// answers it 404.
	Connector Connector
	// Eraser erases a person's messages, files, memory and identities
	// (DELETE /v1/people/{id}, POST /v1/people/{id}/erase); nil erases
	// only their identities and connections.
	Eraser Eraser
}

// Eraser erases a person, acting for actor (bot/governance.Eraser).
type Eraser interface {
	Erase(ctx context.Context, actor, personID string) (store.PersonErased, error)
}

// Auditor appends an act to the audit trail (bot/audit.Recorder).
type Auditor interface {
	Record(ctx context.Context, actor, action, target string, detail any) error
}

// Server is the HTTP API.
type Server struct {
	engine       Engine
	schedules    Schedules
	accounts     Accounts
	connector    Connector
	eraser       Eraser
	now          func() time.Time
	log          *slog.Logger
	keys         *keyguard.Guard
	maxBody      int64
	writeTimeout time.Duration
	defaultAgent string
	done         <-chan struct{}
	prices       map[string]*config.PriceConfig
	audit        Auditor
	budgets      Budgets
	memory       store.Memory
	mux          *http.ServeMux
	handler      http.Handler

	registry *telemetry.Registry
	requests *telemetry.Counter

	checksMu sync.Mutex
	checks   []ReadinessCheck

	patterns []string // every route's ServeMux pattern, for Patterns
}

// New builds the API server; Handler serves it.
func New(cfg Config) *Server {
	s := &Server{
		engine:       cfg.Engine,
		schedules:    cfg.Schedules,
		log:          cfg.Logger,
		keys:         cfg.Keys,
		maxBody:      cfg.MaxBodyBytes,
		writeTimeout: cfg.WriteTimeout,
		defaultAgent: cfg.DefaultAgent,
		done:         cfg.Done,
		prices:       cfg.Prices,
		audit:        cfg.Audit,
		budgets:      cfg.Budgets,
		memory:       cfg.Memory,
		eraser:       cfg.Eraser,
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	s.now, s.accounts, s.connector = clock, cfg.Accounts, cfg.Connector
	if s.keys == nil {
		s.keys = NewKeyGuard(cfg.APIKeys, clock)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.registry = cfg.Metrics
	if s.registry == nil {
		s.registry = telemetry.NewRegistry()
	}
	s.registerMetrics(s.registry)
	s.handler = s.routes()
	return s
}

// Handler serves every route of the API; anything else it answers with the
// error envelope (404 not_found or 405 method_not_allowed).
func (a *Server) Handler() http.Handler { return a.handler }

// Patterns are the ServeMux patterns of every route served: the API's and
// those mounted beside it. Deployment checks (a reverse proxy's example)
// walk them.
func (a *Server) Patterns() []string { return slices.Clone(a.patterns) }

func (a *Server) routes() http.Handler {
	mux := http.NewServeMux()
	a.mux = mux
	handle := func(pattern string, h http.HandlerFunc) {
		a.patterns = append(a.patterns, pattern)
		mux.HandleFunc(pattern, h)
	}
	handle("GET /livez", a.livez)
	handle("GET /healthz", a.livez)
	handle("GET /readyz", a.readyz)
	handle("GET /metrics", a.auth(a.metrics))
	handle("POST /v1/sessions", a.auth(a.createSession))
	handle("GET /v1/sessions", a.auth(a.listSessions))
	handle("GET /v1/sessions/{id}", a.auth(a.getSession))
	handle("GET /v1/sessions/{id}/events", a.auth(a.listEvents))
	handle("POST /v1/sessions/{id}/events", a.auth(a.postEvent))
	handle("POST /v1/sessions/{id}/resume", a.auth(a.resume))
	handle("POST /v1/sessions/{id}/cancel", a.auth(a.cancel))
	handle("POST /v1/sessions/{id}/compact", a.auth(a.compact))
	handle("GET /v1/sessions/{id}/results", a.auth(a.results))
	handle("GET /v1/approvals", a.auth(a.listApprovals))
	handle("GET /v1/approvals/{id}", a.auth(a.getApproval))
	handle("POST /v1/approvals/{id}/decision", a.auth(a.decide))
	handle("POST /v1/approvals/{id}/retry", a.auth(a.retry))
	handle("GET /v1/budgets", a.auth(a.listBudgets))
	handle("PUT /v1/budgets", a.auth(a.setBudget))
	handle("GET /v1/schedules", a.auth(a.listSchedules))
	handle("POST /v1/schedules/{name}/run", a.auth(a.runSchedule))
	handle("GET /v1/people", a.auth(a.listPeople))
	handle("POST /v1/people", a.auth(a.savePerson))
	handle("POST /v1/people/{id}/identities", a.auth(a.linkIdentity))
	handle("DELETE /v1/people/{id}", a.auth(a.erasePerson))
	handle("POST /v1/people/{id}/erase", a.auth(a.erasePerson))
	handle("GET /v1/connections", a.auth(a.listConnections))
	handle("POST /v1/connections/{id}/revoke", a.auth(a.revokeConnection))
	handle("POST /v1/connections/{id}/service-account", a.auth(a.markServiceAccount))
	handle("POST /v1/connections/connect", a.auth(a.startConnect))
	handle("GET /v1/memory", a.auth(a.listMemory))
	handle("GET /v1/memory/files", a.auth(a.memoryFiles))
	handle("GET /v1/memory/file", a.auth(a.memoryFileGet))
	handle("PUT /v1/memory/file", a.auth(a.memoryFilePut))
	handle("DELETE /v1/memory/file", a.auth(a.memoryFileDelete))
	handle("GET /v1/openapi.json", a.auth(a.openAPI))
	return a.middleware(mux)
}

// middleware gives every response a request id, answers unrouted requests
// and panics with the error envelope, and counts statuses.
func (a *Server) middleware(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newRequestID()
		w.Header().Set("X-Request-ID", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				writeError(rec, r, a.log, fmt.Errorf("panic: %v", p))
			}
			a.countStatus(rec.status)
			a.log.Debug("request", tools.LogMethod, r.Method, tools.LogPath, r.URL.Path, tools.LogStatus, rec.status,
				tools.LogDuration, time.Since(start).Round(time.Microsecond).String(), tools.LogRequestID, id)
		}()
		h, pattern := mux.Handler(r)
		if pattern == "" {
			probe := &discardWriter{header: http.Header{}}
			h.ServeHTTP(probe, r)
			if allow := probe.header.Get("Allow"); allow != "" {
				rec.Header().Set("Allow", allow) // the methods a 405's route takes
			}
			writeError(rec, r, a.log, routeError(probe.status, r.Method, r.URL.Path))
			return
		}
		mux.ServeHTTP(rec, r)
	})
}
