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
	"errors"
	"log/slog"
	"net/http"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
	"brain/internal/keyguard"
	"brain/store"
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
	// MayDecideApproval says, as a decision would, whether by decides a.
	MayDecideApproval(ctx context.Context, a engine.Approval, by string) error
	// DecidableApprovals finds, in the database, the pending approvals a
	// decision d may be made on (by d.By, from d.Surface or through a key),
	// across the identities linked to d.By's person, not voted on yet.
	DecidableApprovals(ctx context.Context, d engine.Decision, limit int) ([]engine.Approval, error)
	// MayDecide says, as a decision would, whether d may be made (a key
	// holder's included).
	MayDecide(ctx context.Context, approvalID string, d engine.Decision) error
	// StopFor is Cancel under the rule of a Stop click in Slack.
	StopFor(ctx context.Context, sessionID, by string) (s engine.Session, stopped bool, err error)
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

// Section is one block of the status page (a platform's, the MCP
// servers'); Row one fact of it. They are the platform contract's
// (bot/bridge), so a platform's section shows as it built it.
type (
	Section = bridge.Section
	Row     = bridge.Row
)

// Config is what New needs.
type Config struct {
	Engine    Engine
	Schedules Schedules
	Status    StatusSource // nil: the status page shows the turns only
	Logger    *slog.Logger
	// APIKeys sign people in (then a cookie carries a server-side session).
	// With none, callers on this host are let in as the API lets them.
	APIKeys []config.APIKey
	// Keys checks APIKeys and throttles wrong ones, shared with the API
	// (one budget of guesses, one metric). Nil: a guard of APIKeys of the
	// console's own.
	Keys *keyguard.Guard
	// Admins are the Slack user ids who, signed in with Slack, see and act
	// on everything (console.admins); a key sign-in is always an admin.
	Admins []string
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
	// Origins are the conversation platforms sessions come from, besides
	// the API, the console and schedules.
	Origins []Origin
	// Search lists and finds sessions (the store's); nil: the Engine's,
	// which must have it.
	Search store.SessionSearch
	// Usage sums the turns' usage for the usage page (the store's); nil:
	// the Engine's if it has it, else no usage page.
	Usage store.UsageReport
	// Prices are each agent's model price, for the estimated costs.
	Prices map[string]*config.PriceConfig
	// Audit, when set, records each sign-in; a sign-in that cannot be
	// recorded is refused.
	Audit Auditor
	// Memory keeps agents' memory files (the memory page); nil: none.
	Memory store.Memory
	// Budgets are the budgets page's (nil: the page says none are
	// configured).
	Budgets Budgets
	// Skills lists the skills of skills.sources as they are now (the
	// skills page); nil: none are configured.
	Skills func() []Skill
	// Connections serves the connections page (people's OAuth
	// connections); nil: the page says none are kept.
	Connections Connections
}

// Auditor appends an act to the audit trail (bot/audit.Recorder).
type Auditor interface {
	Record(ctx context.Context, actor, action, target string, detail any) error
}

// Origin is a conversation platform as the sessions pages show it: its
// name (a session's origin) and, when Link is set, where a session of it
// opens on the platform ("" none).
type Origin struct {
	Name string
	Link func(engine.Session) string
}

// Server is the console.
type Server struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	keys    *keyguard.Guard
	auth    *sessionStore
	states  stateSigner
	pages   *pages
	mux     *http.ServeMux
	routes  []route
	handler http.Handler
}

// New builds the console; Routes lists what to mount.
func New(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Clock, keys: cfg.Keys, states: newStateSigner()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.keys == nil {
		keys := make([]keyguard.Key, len(cfg.APIKeys))
		for i, k := range cfg.APIKeys {
			keys[i] = keyguard.Key{Name: k.Name, Secret: k.Key, ActFor: k.ActFor}
		}
		s.keys = keyguard.New(keys, s.now)
	}
	if s.cfg.SessionTTL <= 0 {
		s.cfg.SessionTTL = 12 * time.Hour
	}
	if s.cfg.Search == nil {
		search, ok := cfg.Engine.(store.SessionSearch)
		if !ok {
			return nil, errors.New("console: no session search (Config.Search)")
		}
		s.cfg.Search = search
	}
	if s.cfg.Usage == nil {
		s.cfg.Usage, _ = cfg.Engine.(store.UsageReport)
	}
	s.auth = newSessionStore(s.now, s.cfg.SessionTTL)
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	s.pages = p
	s.mount()
	return s, nil
}

// Patterns are the ServeMux patterns the console answers; the bot mounts
// each beside the API (so /v1 stays the API's).
var Patterns = []string{
	"GET /{$}", "GET /static/", "GET /login", "POST /login", "POST /logout",
	"GET /login/slack", "GET /login/slack/callback",
	"/sessions", "/sessions/", "/approvals", "/approvals/", "/schedules", "/schedules/", "GET /status",
	"GET /inbox", "GET /usage", "/memory", "/memory/", "GET /skills", "/budgets", "/budgets/",
	"/connections", "/connections/",
}

// Handler serves every console route (see Patterns).
func (s *Server) Handler() http.Handler { return s.handler }

// access says who may reach a route; what they then see of a session or
// an approval is the handler's check (access.go).
type access int

const (
	// public routes answer anyone: the sign-in pages, static files.
	public access = iota
	// signedIn routes need a sign-in (or an open console); GET pages send
	// others to the sign-in page, the rest answer 401.
	signedIn
	// adminOnly routes need an admin.
	adminOnly
)

// route is one console route with who may reach it. Every route has one,
// and TestConsole_RoleMatrix walks them all.
type route struct {
	pattern string
	access  access
	h       http.HandlerFunc
}

func (s *Server) routeList() []route {
	return []route{
		{"GET /static/", public, http.FileServerFS(staticFS).ServeHTTP},
		{"GET /login", public, s.guest(s.loginPage)},
		{"POST /login", public, s.guestForm(s.login)},
		{"POST /logout", public, s.guestForm(s.logout)},
		{"GET /login/slack", public, s.visiting(s.slackStart)},
		{"GET /login/slack/callback", public, s.visiting(s.slackCallback)},

		{"GET /{$}", signedIn, s.page(s.sessionsPage)},
		{"GET /sessions", signedIn, s.page(s.sessionsPage)},
		{"POST /sessions", signedIn, s.member(s.form(s.startSession))},
		{"GET /sessions/{id}", signedIn, s.page(s.sessionPage)},
		{"GET /sessions/{id}/live", signedIn, s.member(s.live)},
		{"POST /sessions/{id}/messages", signedIn, s.member(s.form(s.sendMessage))},
		{"POST /sessions/{id}/cancel", signedIn, s.member(s.form(s.cancel))},
		{"POST /sessions/{id}/resume", signedIn, s.member(s.form(s.resume))},
		{"POST /sessions/{id}/retry-call", signedIn, s.member(s.form(s.retryCall))},
		{"GET /inbox", signedIn, s.page(s.inboxPage)},
		{"GET /approvals", signedIn, s.page(s.approvalsPage)},
		{"GET /approvals/{id}", signedIn, s.page(s.approvalPage)},
		{"POST /approvals/{id}/decision", signedIn, s.member(s.form(s.decide))},
		{"POST /approvals/{id}/retry", signedIn, s.member(s.form(s.retry))},
		{"GET /schedules", adminOnly, s.page(s.adminOnly(s.schedulesPage))},
		{"POST /schedules/{name}/run", adminOnly, s.member(s.form(s.adminOnly(s.runSchedule)))},
		{"GET /status", adminOnly, s.page(s.adminOnly(s.statusPage))},
		{"GET /usage", adminOnly, s.page(s.adminOnly(s.usagePage))},
		{"GET /budgets", adminOnly, s.page(s.adminOnly(s.budgetsPage))},
		{"POST /budgets/raise", adminOnly, s.member(s.form(s.adminOnly(s.raiseBudget)))},
		{"GET /memory", adminOnly, s.page(s.adminOnly(s.memoryPage))},
		{"GET /skills", adminOnly, s.page(s.adminOnly(s.skillsPage))},
		{"POST /memory/{action}", adminOnly, s.member(s.form(s.adminOnly(s.memoryChange)))},
		{"GET /connections", signedIn, s.page(s.connectionsPage)},
		{"POST /connections/connect", signedIn, s.member(s.form(s.startConnect))},
		{"POST /connections/{id}/revoke", signedIn, s.member(s.form(s.revokeConnection))},
	}
}

func (s *Server) mount() {
	m := http.NewServeMux()
	s.mux = m
	s.routes = s.routeList()
	for _, rt := range s.routes {
		m.HandleFunc(rt.pattern, rt.h)
	}
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
