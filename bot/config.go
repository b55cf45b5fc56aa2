package bot

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is brain's configuration file; config.example.yaml documents every key.
// LoadConfig returns it with defaults applied and validated. A Config built in
// Go must go through ApplyDefaults and Validate too.
type Config struct {
	Listen     string                 `yaml:"listen"`
	DataDir    string                 `yaml:"data_dir"`
	APIKeys    []string               `yaml:"api_keys"`
	Models     map[string]ModelConfig `yaml:"models"`
	Agents     []AgentConfig          `yaml:"agents"`
	Slack      *SlackConfig           `yaml:"slack"`
	Linear     *LinearConfig          `yaml:"linear"`
	Schedules  []ScheduleConfig       `yaml:"schedules"`
	Tools      ToolsConfig            `yaml:"tools"`
	MCPServers []MCPServerConfig      `yaml:"mcp_servers"`
	Approvals  ApprovalsConfig        `yaml:"approvals"`
	Limits     LimitsConfig           `yaml:"limits"`
	Log        LogConfig              `yaml:"log"`
	Storage    StorageConfig          `yaml:"storage"`

	// Filled by LoadConfig from the ${VAR} expansion.
	missingEnv []string            // referenced, unset and without a default
	unsetAt    map[string][]string // key path -> unset variables in its value
	headerEnv  []string            // values substituted into tools.http headers
}

// ModelConfig is one entry of models.
type ModelConfig struct {
	Provider   string   `yaml:"provider"` // anthropic | openai | fake
	Model      string   `yaml:"model"`
	BaseURL    string   `yaml:"base_url"` // empty = the provider's own
	APIKey     string   `yaml:"api_key"`
	MaxTokens  int      `yaml:"max_tokens"`  // default 4096
	Timeout    Duration `yaml:"timeout"`     // default 10m
	MaxRetries *int     `yaml:"max_retries"` // default 2; 0 = no retries
}

// AgentConfig is one entry of agents.
type AgentConfig struct {
	Name              string       `yaml:"name"`
	Model             string       `yaml:"model"` // a key of models; default "default"
	Instructions      string       `yaml:"instructions"`
	Tools             []string     `yaml:"tools"`
	When              []WhenConfig `yaml:"when"`
	ResultTool        string       `yaml:"result_tool"`
	MaxToolIterations int          `yaml:"max_tool_iterations"` // 0 = limits.max_tool_iterations
	InputMode         string       `yaml:"input_mode"`          // queue (default) | interrupt
	// Approvers decide this agent's approvals; empty = approvals.approvers.
	Approvers []string `yaml:"approvers"`
}

// WhenConfig adds tools to an agent for inputs that match InputMatches.
type WhenConfig struct {
	InputMatches string   `yaml:"input_matches"`
	Tools        []string `yaml:"tools"`

	re *regexp.Regexp // compiled by Validate
}

// SlackConfig is the slack block; absent = Slack off.
type SlackConfig struct {
	BotToken      string `yaml:"bot_token"`
	SigningSecret string `yaml:"signing_secret"`
	AppToken      string `yaml:"app_token"` // set = Socket Mode
	APIURL        string `yaml:"api_url"`   // empty = Slack's own
	Agent         string `yaml:"agent"`     // default "default"
	// ReplyWithoutMention lets a thread that is already a session continue
	// without mentioning the bot again. Default true; see RepliesWithoutMention.
	ReplyWithoutMention *bool `yaml:"reply_without_mention"`
}

// LinearConfig is the linear block; absent = Linear off.
type LinearConfig struct {
	WebhookSecret string `yaml:"webhook_secret"`
	AccessToken   string `yaml:"access_token"`
	APIURL        string `yaml:"api_url"` // GraphQL endpoint; empty = Linear's own
	Agent         string `yaml:"agent"`   // default "default"
}

// ScheduleConfig is one entry of schedules.
type ScheduleConfig struct {
	Name     string       `yaml:"name"`
	Cron     string       `yaml:"cron"`     // 5 fields or a descriptor, robfig/cron/v3
	Timezone string       `yaml:"timezone"` // IANA name; default UTC
	Agent    string       `yaml:"agent"`    // default "default"
	Prompt   string       `yaml:"prompt"`
	Overlap  string       `yaml:"overlap"` // skip (default) | allow
	Enabled  *bool        `yaml:"enabled"` // default true; see IsEnabled
	PostTo   PostToConfig `yaml:"post_to"`
}

// PostToConfig is where a schedule posts its outcome; empty = nowhere.
type PostToConfig struct {
	SlackChannel string `yaml:"slack_channel"`
	LinearIssue  string `yaml:"linear_issue"`
}

// ToolsConfig declares tools; built-ins stay off until their block is present.
type ToolsConfig struct {
	HTTP        []HTTPToolConfig   `yaml:"http"`
	WebSearch   *WebSearchConfig   `yaml:"web_search"`
	WebFetch    *WebFetchConfig    `yaml:"web_fetch"`
	SandboxExec *SandboxExecConfig `yaml:"sandbox_exec"`
}

// HTTPToolConfig is a tool declared in config that calls an HTTP endpoint.
type HTTPToolConfig struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Input       JSONValue         `yaml:"input"`  // JSON Schema of the arguments
	Output      JSONValue         `yaml:"output"` // optional JSON Schema of the result
	Method      string            `yaml:"method"` // default POST
	URL         string            `yaml:"url"`
	Headers     map[string]string `yaml:"headers"`
	TimeoutMS   int               `yaml:"timeout_ms"` // default limits.tool_timeout
	// Approval present = the tool is preview/apply and waits for a person.
	Approval *ApprovalCardConfig `yaml:"approval"`
}

// ApprovalCardConfig is the card of an HTTP approval tool. Title and fact
// values are Go text/templates executed over the tool's arguments.
type ApprovalCardConfig struct {
	Title string       `yaml:"title"`
	Facts []FactConfig `yaml:"facts"`
}

// FactConfig is one line of an approval card.
type FactConfig struct {
	Label string `yaml:"label"`
	Value string `yaml:"value"`
}

// WebSearchConfig turns on web_search.
type WebSearchConfig struct {
	Provider   string `yaml:"provider"` // tavily | brave | searxng | ollama | mojeek | marginalia
	APIKey     string `yaml:"api_key"`
	Endpoint   string `yaml:"endpoint"`    // empty = the provider's own
	MaxResults int    `yaml:"max_results"` // default 5
	TimeoutMS  int    `yaml:"timeout_ms"`  // default 10000
}

// WebFetchConfig turns on web_fetch.
type WebFetchConfig struct {
	MaxChars     int   `yaml:"max_chars"`  // default 4000
	MaxBody      int64 `yaml:"max_body"`   // bytes, default 5 MiB
	TimeoutMS    int   `yaml:"timeout_ms"` // default 10000
	AllowPrivate bool  `yaml:"allow_private"`
}

// SandboxExecConfig turns on sandbox_exec.
type SandboxExecConfig struct {
	Network        bool `yaml:"network"`
	TimeoutSeconds int  `yaml:"timeout_seconds"` // default 120, at most 1800
}

// MCPServerConfig is one entry of mcp_servers.
type MCPServerConfig struct {
	ID          string            `yaml:"id"`
	Transport   string            `yaml:"transport"` // stdio | http; default from command/url
	Command     string            `yaml:"command"`
	Args        []string          `yaml:"args"`
	Env         map[string]string `yaml:"env"` // the child's whole environment
	Cwd         string            `yaml:"cwd"`
	URL         string            `yaml:"url"`
	BearerToken string            `yaml:"bearer_token"`
}

// ApprovalsConfig is the approvals block.
type ApprovalsConfig struct {
	Approvers []string `yaml:"approvers"` // empty = the person who started the session
	TTL       Duration `yaml:"ttl"`       // default 168h
}

// LimitsConfig is the limits block.
type LimitsConfig struct {
	MaxRunningTurns   int      `yaml:"max_running_turns"`   // default 16
	MaxQueuedTurns    int      `yaml:"max_queued_turns"`    // default 256
	MaxToolIterations int      `yaml:"max_tool_iterations"` // default 5
	MaxOutputBytes    int      `yaml:"max_output_bytes"`    // default 65536
	ToolTimeout       Duration `yaml:"tool_timeout"`        // default 60s
	MaxBodyBytes      int64    `yaml:"max_body_bytes"`      // default 1 MiB
}

// LogConfig is the log block.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug | info (default) | warn | error
	Format string `yaml:"format"` // text (default) | json
}

// StorageConfig is the storage block.
type StorageConfig struct {
	Synchronous string `yaml:"synchronous"` // SQLite PRAGMA synchronous: full (default) | normal
}

// Duration is a time.Duration written in YAML as a Go duration string ("120s").
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML parses a Go duration string; an empty value leaves the default.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration like 120s", n.Line)
	}
	if n.Value == "" || n.ShortTag() == "!!null" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration like 120s", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes d as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// JSONValue is any YAML value kept as JSON text, such as a tool's input schema
// written in YAML. Mapping keys keep their order. Empty = the key was absent.
type JSONValue []byte

// UnmarshalYAML converts the node to JSON.
func (v *JSONValue) UnmarshalYAML(n *yaml.Node) error {
	b, err := appendJSON(nil, n)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*v = b
	return nil
}

// MarshalJSON returns the JSON text, or null when empty.
func (v JSONValue) MarshalJSON() ([]byte, error) {
	if len(v) == 0 {
		return []byte("null"), nil
	}
	return v, nil
}

// MissingEnv returns the names of referenced environment variables that were
// unset (and had no ${VAR:-default}), sorted.
func (c *Config) MissingEnv() []string { return slices.Clone(c.missingEnv) }

// Defaults, kept together so the example config and the docs can match them.
const (
	DefaultListen            = "127.0.0.1:8080"
	DefaultDataDir           = "./data"
	DefaultModel             = "default"
	DefaultAgent             = "default"
	defaultMaxTokens         = 4096
	defaultModelTimeout      = 10 * time.Minute
	defaultMaxRetries        = 2
	defaultMaxRunningTurns   = 16
	defaultMaxQueuedTurns    = 256
	defaultMaxToolIterations = 5
	defaultMaxOutputBytes    = 65536
	defaultToolTimeout       = 60 * time.Second
	defaultMaxBodyBytes      = 1 << 20
	defaultApprovalTTL       = 168 * time.Hour
	defaultSearchResults     = 5
	defaultSearchTimeoutMS   = 10000
	defaultFetchMaxChars     = 4000
	defaultFetchMaxBody      = 5 << 20
	defaultFetchTimeoutMS    = 10000
	defaultSandboxTimeout    = 120
	maxSandboxTimeout        = 1800
)

// ApplyDefaults fills every unset key with its default; it is idempotent.
// Values that depend on limits (an agent's max_tool_iterations, tool
// timeouts) are filled from limits after limits itself.
func (c *Config) ApplyDefaults() {
	setDefault(&c.Listen, DefaultListen)
	setDefault(&c.DataDir, DefaultDataDir)
	setDefault(&c.Log.Level, "info")
	setDefault(&c.Log.Format, "text")
	setDefault(&c.Storage.Synchronous, "full")

	l := &c.Limits
	setDefault(&l.MaxRunningTurns, defaultMaxRunningTurns)
	setDefault(&l.MaxQueuedTurns, defaultMaxQueuedTurns)
	setDefault(&l.MaxToolIterations, defaultMaxToolIterations)
	setDefault(&l.MaxOutputBytes, defaultMaxOutputBytes)
	setDefault(&l.ToolTimeout, Duration(defaultToolTimeout))
	setDefault(&l.MaxBodyBytes, defaultMaxBodyBytes)
	toolTimeoutMS := int(l.ToolTimeout.Std().Milliseconds())

	setDefault(&c.Approvals.TTL, Duration(defaultApprovalTTL))

	for name, m := range c.Models {
		setDefault(&m.MaxTokens, defaultMaxTokens)
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
	}
	if s := c.Slack; s != nil {
		setDefault(&s.Agent, DefaultAgent)
		if s.ReplyWithoutMention == nil {
			s.ReplyWithoutMention = ptr(true)
		}
	}
	if ln := c.Linear; ln != nil {
		setDefault(&ln.Agent, DefaultAgent)
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
	}
	for i := range c.MCPServers {
		m := &c.MCPServers[i]
		if m.Transport == "" && m.Command != "" {
			m.Transport = "stdio"
		} else if m.Transport == "" && m.URL != "" {
			m.Transport = "http"
		}
	}
}

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

// Agent returns the agent named name.
func (c *Config) Agent(name string) (*AgentConfig, bool) {
	for i := range c.Agents {
		if c.Agents[i].Name == name {
			return &c.Agents[i], true
		}
	}
	return nil, false
}

// Matches reports whether input matches InputMatches; an invalid pattern
// matches nothing (Validate reports it).
func (w *WhenConfig) Matches(input string) bool {
	re := w.re
	if re == nil {
		var err error
		if re, err = regexp.Compile(w.InputMatches); err != nil {
			return false
		}
	}
	return re.MatchString(input)
}

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
