// Package mcp bridges Model Context Protocol servers into tools: it connects
// to each configured server (a child process over stdio, or streamable HTTP
// with a bearer token), offers every server tool as "<id>__<tool>", adds
// "<id>__list_resources" and "<id>__read_resource" for servers that have
// resources, and keeps the catalog current when a server announces
// notifications/tools/list_changed. Prompts are not bridged.
//
// A stdio child gets only the environment its config names (never brain's)
// and runs in its own process group, which is killed as a group on Close.
// Bearer tokens and env values never appear in results, errors or logs.
// A server whose connection is lost (its child died, its HTTP session was
// forgotten) is reconnected; its tools are withdrawn meanwhile. Tools that
// can only run as tasks are not offered. Over HTTP every request is sent at
// most once (tools.OnceTransport): a call cut off after the write has an
// unknown outcome, never a silent second delivery. A server's tools may
// wait for approval (ServerConfig.Approval): they become preview/apply
// tools whose apply sends the approved call once. The protocol revision is
// negotiated (negotiate.go): 2026-07-28 when the server answers
// server/discover, else 2025-11-25; ServerConfig.Protocol pins one.
//
// It imports only the standard library, mcp-go and brain/tools.
package mcp

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"brain/tools"
)

// Transports a ServerConfig may name.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Defaults for the options.
const (
	DefaultConnectTimeout  = 20 * time.Second
	DefaultRefreshInterval = 5 * time.Minute
	// DefaultDiscoverTimeout bounds the server/discover probe of a
	// 2026-07-28 connection: a server that answers it with an error gets
	// the 2025-11-25 handshake at once, one that ignores it after this
	// long (mcp-go's own default is 5s).
	DefaultDiscoverTimeout = 2 * time.Second
)

// DefaultPath is the PATH a stdio child gets when its Env names none, so
// that commands such as node and npx resolve. The command itself is looked
// up in the child's PATH, not in brain's.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// ServerConfig is one MCP server to connect to.
type ServerConfig struct {
	// ID names the server; its tools are offered as "<ID>__<tool>". Letters,
	// digits, '_' and '-', at most 64 characters.
	ID string
	// Transport is TransportStdio or TransportHTTP.
	Transport string

	// Command, Args, Env and Cwd start a stdio server. Env is the child's
	// whole environment; when it has no PATH, DefaultPath is used. Env
	// values are secrets (redacted from results, errors and logs), except
	// those of PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TZ,
	// TMPDIR, TERM, PWD and NODE_ENV.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// URL is the streamable HTTP endpoint; BearerToken, when set, is sent
	// as "Authorization: Bearer <token>".
	URL         string
	BearerToken string
	// OAuth, when set, authorizes the HTTP requests with OAuth 2.1
	// instead of a bearer token (auth.go).
	OAuth *OAuth

	// Approval says which of the server's tools wait for a person's
	// approval before a call is sent: ApprovalNever (the default),
	// ApprovalAlways or ApprovalAnnotations. ToolApproval overrides it
	// per tool, keyed by the server's own tool name.
	Approval     string
	ToolApproval map[string]string

	// Protocol pins the MCP revision: ProtocolLegacy, or ProtocolStateless,
	// which falls back to ProtocolLegacy when the server does not answer
	// server/discover. Empty negotiates (negotiate.go).
	Protocol string
}

// Protocol revisions a ServerConfig may name.
const (
	ProtocolLegacy    = "2025-11-25"
	ProtocolStateless = "2026-07-28"
)

// Option tunes a Bridge.
type Option func(*options)

type options struct {
	connectTimeout  time.Duration
	refreshInterval time.Duration
	discoverTimeout time.Duration
}

// WithDiscoverTimeout bounds the server/discover probe sent to servers set
// to protocol 2026-07-28 before falling back to the 2025-11-25 handshake.
// Default 2s.
func WithDiscoverTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.discoverTimeout = d
		}
	}
}

// WithConnectTimeout bounds connecting to one server: starting it, the
// initialize handshake and the first tool list. Default 20s.
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.connectTimeout = d
		}
	}
}

// WithRefreshInterval sets the fallback timer that re-lists every server's
// tools and retries servers that are not connected (list_changed
// notifications are the main path). Default 5 minutes; zero or less turns
// the timer off.
func WithRefreshInterval(d time.Duration) Option {
	return func(o *options) { o.refreshInterval = d }
}

// Bridge holds the connections to the configured MCP servers and their
// current tool catalog. It is safe for concurrent use.
type Bridge struct {
	log  *slog.Logger
	opts options

	life   context.Context // ends on Close
	cancel context.CancelFunc
	loops  sync.WaitGroup

	servers []*server

	mu        sync.Mutex
	listeners []func()
	notifyMu  sync.Mutex // OnChange callbacks never overlap
	closeOnce sync.Once
}

// Connect connects to the servers concurrently, each within the connect
// timeout, and returns once every attempt has finished. A server that fails
// to connect, or whose config is invalid, is logged with its id and
// skipped; it never fails the others. ctx bounds the connecting only: the
// bridge lives until Close.
func Connect(ctx context.Context, servers []ServerConfig, log *slog.Logger, opts ...Option) *Bridge {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := options{connectTimeout: DefaultConnectTimeout, refreshInterval: DefaultRefreshInterval, discoverTimeout: DefaultDiscoverTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &Bridge{log: log, opts: o, life: life, cancel: cancel}
	seen := map[string]bool{}
	for _, cfg := range servers {
		if err := cfg.Validate(); err != nil {
			log.Warn("mcp server skipped: invalid config", tools.LogMCPServer, cfg.ID, tools.LogErr, err.Error())
			continue
		}
		if seen[cfg.ID] {
			log.Warn("mcp server skipped: id used twice", tools.LogMCPServer, cfg.ID)
			continue
		}
		seen[cfg.ID] = true
		b.servers = append(b.servers, newServer(b, cfg))
	}
	var wg sync.WaitGroup
	for _, s := range b.servers {
		wg.Go(func() { s.reconnect(ctx) })
	}
	wg.Wait()
	for _, s := range b.servers {
		b.loops.Go(func() { s.loop(life) })
	}
	return b
}

// Tools returns the current catalog: the tools of every connected server,
// in config order. Each definition's Run reaches the server that is
// connected at call time.
func (b *Bridge) Tools() []tools.Definition {
	var out []tools.Definition
	for _, s := range b.servers {
		out = append(out, s.catalog()...)
	}
	return out
}

// OnChange registers fn to be called after the catalog changed (a server's
// tool list changed, a server was lost or came back). Calls come from the
// bridge's goroutines, one at a time, never after Close returns; fn should
// not block for long and must not call Close.
func (b *Bridge) OnChange(fn func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.listeners = append(b.listeners, fn)
}

func (b *Bridge) changed() {
	b.mu.Lock()
	fns := append([]func(){}, b.listeners...)
	b.mu.Unlock()
	b.notifyMu.Lock()
	defer b.notifyMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Close disconnects every server and kills every stdio child's process
// group. It waits for the bridge's goroutines and children to end, and is
// safe to call twice. Calls made afterwards fail before dispatch.
func (b *Bridge) Close() error {
	b.closeOnce.Do(func() {
		b.cancel()
		b.loops.Wait()
		var wg sync.WaitGroup
		for _, s := range b.servers {
			wg.Go(s.shutdown)
		}
		wg.Wait()
	})
	return nil
}
