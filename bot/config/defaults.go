package config

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"brain/engine"
)

// Defaults, kept together so the example config and the docs can match them.
// Those the engine also has refer to engine's exported defaults.
const (
	DefaultListen  = "127.0.0.1:8080"
	DefaultDataDir = "./data"
	DefaultModel   = "default"
	DefaultAgent   = "default"
	// Slack thread context and files (slack.thread_context, slack.files).
	DefaultThreadMessages = 50
	DefaultThreadChars    = 12000
	// Anthropic takes images up to 5 MB and requests up to 32 MB; files
	// travel base64-encoded (4/3 larger).
	DefaultMaxFileBytes     = 5 << 20
	DefaultMaxTurnFileBytes = 20 << 20
	DefaultMaxFileTextChars = 20000
	DefaultFileStoreBytes   = 1 << 30
	// Linear's OAuth endpoints (linear.app/developers, "OAuth 2.0").
	DefaultLinearAuthorizeURL = "https://linear.app/oauth/authorize"
	DefaultLinearTokenURL     = "https://api.linear.app/oauth/token"
	defaultFakeModel          = "fake-model" // the model name a provider: fake model reports
	defaultMaxTokens          = 4096
	defaultMaxParallelTools   = engine.DefaultMaxParallelTools
	defaultModelTimeout       = 10 * time.Minute
	defaultMaxRetries         = 2
	// The one deliberate difference from the engine's defaults: a daemon
	// serves many threads, and turns mostly wait on the model (the README's
	// "Choosing limits.max_running_turns"); engine.DefaultMaxRunningTurns
	// is for an engine embedded without a config.
	defaultMaxRunningTurns   = 64
	defaultMaxQueuedTurns    = engine.DefaultMaxQueuedTurns
	defaultMaxToolIterations = engine.DefaultMaxToolIterations
	defaultMaxOutputBytes    = engine.DefaultMaxOutputBytes
	defaultToolTimeout       = engine.DefaultToolTimeout
	defaultMaxBodyBytes      = 1 << 20
	defaultMaxConnections    = 1024
	defaultReadTimeout       = 30 * time.Second
	defaultWriteTimeout      = 60 * time.Second // above the 30 s a cancel may wait for its turn
	defaultIdleTimeout       = 120 * time.Second
	defaultApprovalTTL       = engine.DefaultApprovalTTL
	defaultSearchResults     = 5
	defaultSearchTimeoutMS   = 10000
	defaultFetchMaxChars     = 4000
	defaultFetchMaxBody      = 5 << 20
	defaultFetchTimeoutMS    = 10000
	defaultSandboxTimeout    = 120
	defaultLeaseTTL          = engine.DefaultLeaseTTL
	defaultPollInterval      = engine.DefaultPollInterval
	defaultOutageGrace       = 5 * time.Minute // how long a turn waits out an unreachable database
	maxSandboxTimeout        = 1800
)

// ApplyDefaults fills every unset key with its default; it is idempotent.
// Values that depend on other blocks (an agent's max_tool_iterations and
// approvers, tool timeouts) are filled from limits and approvals after those.
// defaultMaxPendingPerClient bounds one address's connections that have
// not sent a request yet (bot/conngate.go).
const defaultMaxPendingPerClient = 64

func (c *Config) ApplyDefaults() {
	setDefault(&c.Listen, DefaultListen)
	setDefault(&c.DataDir, DefaultDataDir)
	setDefault(&c.Log.Level, "info")
	setDefault(&c.Log.Format, "text")
	setDefault(&c.Telemetry.ServiceName, "brain")
	setDefault(&c.Storage.Driver, DriverSQLite)
	setDefault(&c.Storage.OutageGrace, Duration(defaultOutageGrace))
	if c.Storage.Driver == DriverSQLite {
		setDefault(&c.Storage.Synchronous, "full")
	}
	if c.Storage.Driver == DriverPostgres {
		setDefault(&c.Storage.LeaseTTL, Duration(defaultLeaseTTL))
		setDefault(&c.Storage.PollInterval, Duration(defaultPollInterval))
	}
	c.applyConsoleDefaults()
	c.applyGovernanceDefaults()
	for i := range c.APIKeys {
		setDefault(&c.APIKeys[i].Name, DefaultAPIKeyName(i))
	}

	l := &c.Limits
	setDefault(&l.MaxRunningTurns, defaultMaxRunningTurns)
	setDefault(&l.MaxQueuedTurns, defaultMaxQueuedTurns)
	setDefault(&l.MaxToolIterations, defaultMaxToolIterations)
	setDefault(&l.MaxOutputBytes, defaultMaxOutputBytes)
	setDefault(&l.ToolTimeout, Duration(defaultToolTimeout))
	setDefault(&l.ElicitationTimeout, Duration(engine.DefaultElicitationTimeout))
	setDefault(&l.MaxBodyBytes, defaultMaxBodyBytes)
	setDefault(&l.MaxParallelTools, defaultMaxParallelTools)
	setDefault(&l.MaxConnections, defaultMaxConnections)
	setDefault(&l.MaxPendingPerClient, defaultMaxPendingPerClient)
	setDefault(&l.ReadTimeout, Duration(defaultReadTimeout))
	setDefault(&l.WriteTimeout, Duration(defaultWriteTimeout))
	setDefault(&l.IdleTimeout, Duration(defaultIdleTimeout))
	toolTimeoutMS := int(l.ToolTimeout.Std().Milliseconds())

	setDefault(&c.Approvals.TTL, Duration(defaultApprovalTTL))

	for name, m := range c.Models {
		if m.Provider == "fake" {
			setDefault(&m.Model, defaultFakeModel)
		}
		setDefault(&m.MaxTokens, defaultMaxTokens)
		// A window the answer's reserve would fill is no default: a large
		// max_tokens on a model brain does not know keeps room for input.
		setDefault(&m.ContextWindow, max(ContextWindowFor(m.Provider, m.Model), 2*m.MaxTokens))
		setDefault(&m.Timeout, Duration(defaultModelTimeout))
		if m.MaxRetries == nil {
			m.MaxRetries = ptr(defaultMaxRetries)
		}
		c.Models[name] = m
	}
	for i := range c.Agents {
		a := &c.Agents[i]
		canonicalTools(a.Tools)
		for j := range a.When {
			canonicalTools(a.When[j].Tools)
		}
		setDefault(&a.Model, DefaultModel)
		setDefault(&a.InputMode, "queue")
		setDefault(&a.MaxToolIterations, l.MaxToolIterations)
		a.Memory.applyDefaults()
		if len(a.Approvers) == 0 {
			a.Approvers = slices.Clone(c.Approvals.Approvers)
		}
	}
	if s := c.Slack; s != nil {
		setDefault(&s.Agent, DefaultAgent)
		if s.ReplyWithoutMention == nil {
			s.ReplyWithoutMention = ptr(true)
		}
		setDefault(&s.ThreadContext.MaxMessages, DefaultThreadMessages)
		setDefault(&s.ThreadContext.MaxChars, DefaultThreadChars)
		setDefault(&s.Files.MaxFileBytes, DefaultMaxFileBytes)
		setDefault(&s.Files.MaxTurnBytes, DefaultMaxTurnFileBytes)
		setDefault(&s.Files.MaxTextChars, DefaultMaxFileTextChars)
		setDefault(&s.Files.StoreBytes, DefaultFileStoreBytes)
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if ln := c.Linear; ln != nil {
		setDefault(&ln.Agent, DefaultAgent)
		setDefault(&ln.AuthorizeURL, DefaultLinearAuthorizeURL)
		setDefault(&ln.TokenURL, DefaultLinearTokenURL)
		if ln.MoveToStarted == nil {
			ln.MoveToStarted = ptr(true)
		}
	}
	if g := c.GitHub; g != nil {
		setDefault(&g.Agent, DefaultAgent)
	}
	for i := range c.Schedules {
		s := &c.Schedules[i]
		setDefault(&s.Timezone, "UTC")
		setDefault(&s.Agent, DefaultAgent)
		setDefault(&s.Overlap, "skip")
		if s.Enabled == nil {
			s.Enabled = ptr(true)
		}
	}
	for i := range c.Tools.HTTP {
		h := &c.Tools.HTTP[i]
		h.Method = strings.ToUpper(h.Method)
		setDefault(&h.Method, "POST")
		setDefault(&h.TimeoutMS, toolTimeoutMS)
	}
	if w := c.Tools.WebSearch; w != nil {
		setDefault(&w.MaxResults, defaultSearchResults)
		setDefault(&w.TimeoutMS, defaultSearchTimeoutMS)
	}
	if w := c.Tools.WebFetch; w != nil {
		setDefault(&w.MaxChars, defaultFetchMaxChars)
		setDefault(&w.MaxBody, defaultFetchMaxBody)
		setDefault(&w.TimeoutMS, defaultFetchTimeoutMS)
	}
	if s := c.Tools.SandboxExec; s != nil {
		setDefault(&s.TimeoutSeconds, defaultSandboxTimeout)
		if s.Network == "" {
			s.Network = NetworkNone
		}
	}
	for i := range c.MCPServers {
		m := &c.MCPServers[i]
		if m.Transport == "" && m.Command != "" {
			m.Transport = "stdio"
		} else if m.Transport == "" && m.URL != "" {
			m.Transport = "http"
		}
		if m.Auth == "oauth" && m.Per == "" {
			m.Per = "workspace"
		}
	}
}

// DefaultAPIKeyName is the name of the api_keys entry at index i when it
// has none (the plain form): api-key-1 for the first. It changes when keys
// are reordered, so give keys whose decisions you audit a name.
func DefaultAPIKeyName(i int) string { return fmt.Sprintf("api-key-%d", i+1) }

func canonicalTools(names []string) {
	for i, n := range names {
		names[i] = CanonicalTool(n)
	}
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

func ptr[T any](v T) *T { return &v }

// RepliesWithoutMention reports reply_without_mention (default true).
func (s *SlackConfig) RepliesWithoutMention() bool {
	return s.ReplyWithoutMention == nil || *s.ReplyWithoutMention
}

// IsEnabled reports enabled (default true).
func (s *ScheduleConfig) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Retries returns max_retries (default 2).
func (m ModelConfig) Retries() int {
	if m.MaxRetries == nil {
		return defaultMaxRetries
	}
	return *m.MaxRetries
}

// SlogLevel returns log.level as a slog.Level (info when unset).
func (l LogConfig) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
