// Package web is brain's web console, served at /: the sessions, a
// session's live timeline, the approvals, the schedules and the status,
// as server-rendered html/template pages embedded in the binary, with a
// little hand-written JavaScript (static/console.js) for live updates.
// Every page reads without JavaScript.
//
// It works on the small interfaces it declares (Engine, Schedules,
// StatusSource), like bot/api, so it never imports a store, a channel, a
// webhook or the bot that wires it (bot/layering_test.go checks it).
package web

import (
	"context"
	"embed"
	"log/slog"
	"net/http"
	"time"

	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
	"brain/tools"
)

// Log attribute keys.
const (
	logErr     = tools.LogErr
	logPath    = tools.LogPath
	logSession = tools.LogSession
	logWho     = "who"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Engine is what the console asks of the engine; *engine.Engine has it.
type Engine interface {
	Stats() engine.Stats
	engine.Sessions
	engine.Log
	engine.Changes
	// Deltas feeds the text the model writes in the session's turns from
	// now on (never stored); the caller closes it.
	Deltas(sessionID string) DeltaFeed
	engine.Starter
	engine.Turns
	engine.Approvals
}

// DeltaFeed is a session's streamed text as it is written;
// *engine.DeltaFeed has it.
type DeltaFeed interface {
	// Ready is signalled when deltas may be waiting.
	Ready() <-chan struct{}
	// Take returns the deltas collected so far without waiting.
	Take() []engine.Delta
	Close()
}

// Schedules is what the schedules page asks of the scheduler: the views
// GET /v1/schedules shows.
type Schedules interface {
	Status(ctx context.Context) ([]schedule.Status, error)
	RunNow(ctx context.Context, name string) (schedule.Run, error)
}

// StatusSource describes the parts of brain the status page shows (Slack,
// Linear, MCP servers); the turns come from the engine.
type StatusSource interface {
	StatusSections(ctx context.Context) []Section
}

// Section is one block of the status page: a component and its facts.
type Section struct {
	Title string
	// State is "ok", "warn" or "down"; it colours the title.
	State string
	Rows  []Row
}

// Row is one fact of a Section; Items, when set, are listed under it.
type Row struct {
	Label, Value string
	Items        []string
}

// Config is what New needs.
type Config struct {
	Engine    Engine
	Schedules Schedules
	Status    StatusSource // nil: the status page shows the turns only
	Logger    *slog.Logger
	// APIKeys sign people in (then a cookie carries a server-side session).
	// With none, callers on this host are let in as the API lets them.
	APIKeys []config.APIKey
	// SessionTTL bounds a sign-in.
	SessionTTL time.Duration
	// SlackSignIn, when set, offers "Sign in with Slack".
	SlackSignIn *SlackSignIn
	// PublicURL is brain's external base URL; with https, cookies are
	// marked Secure.
	PublicURL string
	// DefaultAgent runs sessions started from the console.
	DefaultAgent string
	// Agents are the agent names a new session may pick.
	Agents []string
	// Clock defaults to time.Now.
	Clock func() time.Time
	// WriteTimeout is the HTTP server's write timeout (0 = none); a live
	// timeline moves its write deadline before each write instead.
	WriteTimeout time.Duration
	// Done, once closed, ends live timelines, so a server shutdown need not
	// wait for them.
	Done <-chan struct{}
}

// Server is the console.
type Server struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	keys    keyring
	auth    *sessionStore
	signIns pendingSignIns
	pages   *pages
	mux     *http.ServeMux
	handler http.Handler
}

// New builds the console; Routes lists what to mount.
func New(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Clock, keys: newKeyring(cfg.APIKeys)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.cfg.SessionTTL <= 0 {
		s.cfg.SessionTTL = 12 * time.Hour
	}
	s.auth = newSessionStore(s.now, s.cfg.SessionTTL)
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	s.pages = p
	s.routes()
	return s, nil
}

// Patterns are the ServeMux patterns the console answers; the bot mounts
// each beside the API (so /v1 stays the API's).
var Patterns = []string{
	"GET /{$}", "GET /static/", "GET /login", "POST /login", "POST /logout",
	"GET /login/slack", "GET /login/slack/callback",
	"/sessions", "/sessions/", "/approvals", "/approvals/", "/schedules", "/schedules/", "GET /status",
}

// Handler serves every console route (see Patterns).
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() {
	m := http.NewServeMux()
	s.mux = m
	m.Handle("GET /static/", http.FileServerFS(staticFS))
	m.HandleFunc("GET /login", s.guest(s.loginPage))
	m.HandleFunc("POST /login", s.guestForm(s.login))
	m.HandleFunc("POST /logout", s.guestForm(s.logout))
	m.HandleFunc("GET /login/slack", s.guest(s.slackStart))
	m.HandleFunc("GET /login/slack/callback", s.guest(s.slackCallback))

	m.HandleFunc("GET /{$}", s.page(s.sessionsPage))
	m.HandleFunc("GET /sessions", s.page(s.sessionsPage))
	m.HandleFunc("POST /sessions", s.member(s.form(s.startSession)))
	m.HandleFunc("GET /sessions/{id}", s.page(s.sessionPage))
	m.HandleFunc("GET /sessions/{id}/live", s.member(s.live))
	m.HandleFunc("POST /sessions/{id}/messages", s.member(s.form(s.sendMessage)))
	m.HandleFunc("POST /sessions/{id}/cancel", s.member(s.form(s.cancel)))
	m.HandleFunc("POST /sessions/{id}/resume", s.member(s.form(s.resume)))
	m.HandleFunc("GET /approvals", s.page(s.approvalsPage))
	m.HandleFunc("GET /approvals/{id}", s.page(s.approvalPage))
	m.HandleFunc("POST /approvals/{id}/decision", s.member(s.form(s.decide)))
	m.HandleFunc("POST /approvals/{id}/retry", s.member(s.form(s.retry)))
	m.HandleFunc("GET /schedules", s.page(s.schedulesPage))
	m.HandleFunc("POST /schedules/{name}/run", s.member(s.form(s.runSchedule)))
	m.HandleFunc("GET /status", s.page(s.statusPage))
	s.handler = securityHeaders(m)
}

// contentSecurityPolicy allows scripts, styles and requests to this origin
// only: no inline script or event handler runs, and no image or link
// target elsewhere is fetched by the page itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		if h.Get("Cache-Control") == "" {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}
