// Package config is brain's configuration: the types of the YAML file, Load
// (read, ${ENV} expansion, unknown keys), the defaults (all of them, in
// defaults.go), Validate (every problem at once, named by key path) and the
// secrets a log scrubber must hide.
//
// It is a leaf of the application: it imports no other brain package (not
// engine, tools, store, channels, webhooks nor the rest of bot), so anything
// may depend on it and it can be tested alone.
package config

import "regexp"

// Config is brain's configuration file; config.example.yaml documents every key.
// Load returns it with defaults applied and validated. A Config built in
// Go must go through ApplyDefaults and Validate too.
type Config struct {
	Listen  string `yaml:"listen"`
	DataDir string `yaml:"data_dir"`
	// PublicURL is the externally reachable base URL of brain (OAuth
	// redirect URIs, links to sessions); "" = none. No trailing slash.
	PublicURL  string                 `yaml:"public_url"`
	APIKeys    []APIKey               `yaml:"api_keys"`
	Models     map[string]ModelConfig `yaml:"models"`
	Agents     []AgentConfig          `yaml:"agents"`
	Slack      *SlackConfig           `yaml:"slack"`
	Linear     *LinearConfig          `yaml:"linear"`
	GitHub     *GitHubChatConfig      `yaml:"github"`
	Schedules  []ScheduleConfig       `yaml:"schedules"`
	Tools      ToolsConfig            `yaml:"tools"`
	Skills     SkillsConfig           `yaml:"skills"`
	MCPServers []MCPServerConfig      `yaml:"mcp_servers"`
	Approvals  ApprovalsConfig        `yaml:"approvals"`
	Limits     LimitsConfig           `yaml:"limits"`
	Log        LogConfig              `yaml:"log"`
	Storage    StorageConfig          `yaml:"storage"`
	Telemetry  TelemetryConfig        `yaml:"telemetry"`
	Console    ConsoleConfig          `yaml:"console"`
	// SecretsAtRest is the secrets block (the key of stored credentials).
	SecretsAtRest SecretsConfig    `yaml:"secrets"`
	Audit         AuditConfig      `yaml:"audit"`
	Budgets       []BudgetConfig   `yaml:"budgets"`
	RateLimits    RateLimitsConfig `yaml:"rate_limits"`
	Retention     RetentionConfig  `yaml:"retention"`

	// Filled by Load from the ${VAR} expansion.
	missingEnv []string            // referenced, unset and without a default
	unsetAt    map[string][]string // key path -> unset variables in its value
	headerEnv  []string            // values substituted into tools.http headers
	badKeys    map[string]bool     // keys whose value had the wrong type (see badType)
	lines      map[string]int      // key path -> line of its value (see Line)
}

// ModelConfig is one entry of models.
type ModelConfig struct {
	Provider  string `yaml:"provider"` // anthropic | openai | fake
	Model     string `yaml:"model"`    // default fake-model for provider fake
	BaseURL   string `yaml:"base_url"` // empty = the provider's own
	APIKey    string `yaml:"api_key"`
	MaxTokens int    `yaml:"max_tokens"` // default 4096; also the part of the context window kept for the answer
	// ContextWindow is the model's context window in tokens; the default
	// comes from the model's name (ContextWindowFor).
	ContextWindow int `yaml:"context_window"`
	// Price, when set, gives an estimated cost of each session's usage.
	Price      *PriceConfig `yaml:"price"`
	Timeout    Duration     `yaml:"timeout"`     // default 10m
	MaxRetries *int         `yaml:"max_retries"` // default 2; 0 = no retries
	// Script and Listen are for provider fake only: echo (default) or demo,
	// and the loopback host:port its server listens on (default a free port).
	Script string `yaml:"script"`
	Listen string `yaml:"listen"`
}

// PriceConfig is a model's price in US dollars per million tokens, as the
// provider publishes it: plain input, input read from the prompt cache,
// input written to it (Anthropic), and output. Unset cache prices are the
// input price.
type PriceConfig struct {
	Input      float64  `yaml:"input"`
	CachedRead *float64 `yaml:"cache_read"`
	CacheWrite *float64 `yaml:"cache_write"`
	Output     float64  `yaml:"output"`
}

// AgentConfig is one entry of agents.
type AgentConfig struct {
	Name         string   `yaml:"name"`
	Model        string   `yaml:"model"` // a key of models; default "default"
	Instructions string   `yaml:"instructions"`
	Tools        []string `yaml:"tools"`
	// Skills are the agent's Agent Skills: names or globs of skills of
	// skills.sources.
	Skills            []string     `yaml:"skills"`
	When              []WhenConfig `yaml:"when"`
	ResultTool        string       `yaml:"result_tool"`
	MaxToolIterations int          `yaml:"max_tool_iterations"` // 0 = limits.max_tool_iterations
	InputMode         string       `yaml:"input_mode"`          // queue (default) | interrupt
	// Approvers decide this agent's approvals; empty = approvals.approvers.
	Approvers []string `yaml:"approvers"`
	// Slack is how the agent presents itself in Slack's agent view.
	Slack AgentSlackConfig `yaml:"slack"`
	// Memory offers the memory tool; absent, the agent has none.
	Memory *AgentMemory `yaml:"memory"`
}

// AgentSlackConfig is agents[].slack.
type AgentSlackConfig struct {
	// SuggestedPrompts are offered when a person opens a new assistant
	// thread (at most MaxSuggestedPrompts, each 1..MaxPromptLength).
	SuggestedPrompts []string `yaml:"suggested_prompts"`
}

// Limits of agents[].slack.suggested_prompts (Slack shows four).
const (
	MaxSuggestedPrompts = 4
	MaxPromptLength     = 300
)

// WhenConfig adds tools to an agent for inputs that match InputMatches.
type WhenConfig struct {
	InputMatches string   `yaml:"input_matches"`
	Tools        []string `yaml:"tools"`
	Skills       []string `yaml:"skills"` // names or globs, as agents[].skills

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
	// ThreadContext bounds what a session started mid-thread reads of the
	// thread's earlier messages.
	ThreadContext SlackThreadContext `yaml:"thread_context"`
	// Files bounds the files shared in sessions' threads.
	Files SlackFiles `yaml:"files"`
	// CodeChannels moves a session that starts a coding task into a
	// Slack code channel (docs/slack.md#code-channels).
	CodeChannels SlackCodeChannels `yaml:"code_channels"`
}

// SlackThreadContext is slack.thread_context: the newest earlier messages
// are kept, up to both bounds.
type SlackThreadContext struct {
	MaxMessages int `yaml:"max_messages"` // default 50; -1 reads no thread
	MaxChars    int `yaml:"max_chars"`    // default 12000
}

// SlackFiles is slack.files.
type SlackFiles struct {
	MaxFileBytes int64 `yaml:"max_file_bytes"` // one file, default 5 MiB
	// MaxTurnBytes caps all files of one message, and the file content
	// sent in one model request (older files beyond it are named only);
	// default 20 MiB.
	MaxTurnBytes int64 `yaml:"max_turn_bytes"`
	MaxTextChars int   `yaml:"max_text_chars"` // text the model gets of one text file, default 20000
	StoreBytes   int64 `yaml:"store_bytes"`    // the data_dir/files budget, default 1 GiB
}

// LinearConfig is the linear block; absent = Linear off.
type LinearConfig struct {
	WebhookSecret string `yaml:"webhook_secret"`
	// AccessToken is a static token (a personal API key, or an OAuth token
	// obtained by hand); it is never refreshed. Prefer the install flow.
	AccessToken string `yaml:"access_token"`
	APIURL      string `yaml:"api_url"` // GraphQL endpoint; empty = Linear's own
	Agent       string `yaml:"agent"`   // default "default"

	// The OAuth application: with ClientID set, workspaces install brain at
	// public_url + /linear/oauth/install and their tokens live in the
	// database, refreshed before they expire.
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	AuthorizeURL string `yaml:"authorize_url"` // default Linear's
	TokenURL     string `yaml:"token_url"`     // default Linear's

	// MoveToStarted: when delegated an issue that is not started, move it
	// to the team's first started state. Default true.
	MoveToStarted *bool `yaml:"move_to_started"`

	// ReviewState is the workflow state (its name, or its id) a delegated
	// issue moves to once an approval opened a pull request for it; the
	// pull request is attached either way. Looked up in the issue's team.
	ReviewState string `yaml:"review_state"`
}

// OAuth reports whether workspaces install brain with OAuth.
func (l *LinearConfig) OAuth() bool { return l.ClientID != "" }

// MovesToStarted reports linear.move_to_started (default true).
func (l *LinearConfig) MovesToStarted() bool { return l.MoveToStarted == nil || *l.MoveToStarted }

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

// PostToConfig is where a schedule posts its outcome; empty = nowhere. The
// API shows it as is (GET /v1/schedules).
type PostToConfig struct {
	SlackChannel string `yaml:"slack_channel" json:"slack_channel,omitempty"`
	LinearIssue  string `yaml:"linear_issue" json:"linear_issue,omitempty"`
	// GitHubIssue is an issue or pull request, "owner/repo#number".
	GitHubIssue string `yaml:"github_issue" json:"github_issue,omitempty"`
}

// GitHubChatConfig is the github block: conversations with brain on
// GitHub issues and pull requests (webhooks at /github/webhook).
type GitHubChatConfig struct {
	WebhookSecret string `yaml:"webhook_secret"`
	// Token is what brain comments with: a bot account's fine-grained
	// token. Exactly one of Token and App.
	Token string `yaml:"token"`
	// App comments as a GitHub App installation: installation tokens are
	// minted and refreshed as the github_* tools' are.
	App     *GitHubAppConfig `yaml:"app"`
	BaseURL string           `yaml:"base_url"` // the REST API root; empty = https://api.github.com
	// Login is the app's login: what a mention names (@login) and whose
	// own comments are never answered.
	Login string `yaml:"login"`
	Agent string `yaml:"agent"`
	// Repos says who may start a session, per repository glob; the first
	// matching entry counts. Empty: every repository, people with write
	// permission.
	Repos []GitHubRepoAccess `yaml:"repos"`
	// ApproversNeedWrite adds a rule for deciding approvals on GitHub:
	// the decider must also have write permission on the repository.
	ApproversNeedWrite bool `yaml:"approvers_need_write"`
}

// GitHubRepoAccess is one entry of github.repos.
type GitHubRepoAccess struct {
	Repo string `yaml:"repo"` // owner/name; either may be a glob (acme/*)
	// Users are the logins who may start sessions ("*" anyone); empty =
	// people with write permission on the repository.
	Users []string `yaml:"users"`
}

// ToolsConfig declares tools; built-ins stay off until their block is present.
type ToolsConfig struct {
	HTTP        []HTTPToolConfig   `yaml:"http"`
	WebSearch   *WebSearchConfig   `yaml:"web_search"`
	WebFetch    *WebFetchConfig    `yaml:"web_fetch"`
	SandboxExec *SandboxExecConfig `yaml:"sandbox_exec"`
	GitHub      *GitHubConfig      `yaml:"github"`
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
	// OAuth present = the tool sends the bearer token of an OAuth
	// connection (provider "http:<name>").
	OAuth *HTTPOAuthConfig `yaml:"oauth"`
	// ActsAs says whose connection an oauth per: person tool uses:
	// "requester" (the default: the person who asked) or "approver" (in
	// an approved call, the person whose vote decided it). Other tools
	// act as the app ("app", the default).
	ActsAs string `yaml:"acts_as"`
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
	Network        SandboxNetwork       `yaml:"network"`         // none (default) | host | proxy
	Egress         *SandboxEgressConfig `yaml:"egress"`          // network: proxy's policy
	TimeoutSeconds int                  `yaml:"timeout_seconds"` // default 120, at most 1800
	// RunAs is the host user sandboxed commands run as when brain runs as
	// root (uid, uid:gid or names; default nobody). Refused when not root.
	RunAs string `yaml:"run_as"`
	// Per-command bounds; 0 = the sandbox's default, negative = off.
	MaxProcesses      int   `yaml:"max_processes"`       // default 1024
	MaxMemoryBytes    int64 `yaml:"max_memory_bytes"`    // default 4 GiB per process
	MaxCPUSeconds     int   `yaml:"max_cpu_seconds"`     // default 600 per process
	MaxFileBytes      int64 `yaml:"max_file_bytes"`      // default 1 GiB per file
	MaxWorkspaceBytes int64 `yaml:"max_workspace_bytes"` // default 2 GiB, checked after each command
	// ModuleCacheBytes, above 0, keeps each agent's Go module downloads
	// (data_dir/cache/gomod/AGENT, read-only in the sandbox) within that
	// size; 0 = none.
	ModuleCacheBytes int64 `yaml:"module_cache_bytes"`
}

// GitHubConfig turns on the github_* tools. Exactly one of Token and App
// authenticates.
type GitHubConfig struct {
	Token   string           `yaml:"token"` // a fine-grained personal access token
	App     *GitHubAppConfig `yaml:"app"`
	BaseURL string           `yaml:"base_url"` // the REST API root; empty = https://api.github.com
	// Repos is the allow-list, owner/name; the name may be a glob (acme/*).
	Repos []string `yaml:"repos"`
	// GitURL is the root of the git host's URLs that
	// github_propose_change pushes to; empty = https://github.com (or
	// base_url's scheme and host for GitHub Enterprise Server).
	GitURL string `yaml:"git_url"`
	// UserTokens lets people connect their GitHub account (GitHub App
	// user access tokens) so tools may act as them.
	UserTokens *GitHubUserTokensConfig `yaml:"user_tokens"`
	// ActsAs says whose credential each tool uses: a tool name, or
	// "default" for every tool not named, -> app (the default: the token
	// or App installation above), requester (the person who asked) or
	// approver (the person whose vote decided the approval). Acting as a
	// person needs user_tokens; docs/github.md lists which tools may.
	ActsAs map[string]string `yaml:"acts_as"`
}

// GitHubAppConfig authenticates as a GitHub App installation.
type GitHubAppConfig struct {
	AppID          int64  `yaml:"app_id"`
	PrivateKeyFile string `yaml:"private_key_file"` // the app's PEM private key
	InstallationID int64  `yaml:"installation_id"`
}

// LimitsConfig is the limits block.
type LimitsConfig struct {
	MaxRunningTurns   int      `yaml:"max_running_turns"`   // default 64
	MaxQueuedTurns    int      `yaml:"max_queued_turns"`    // default 256
	MaxToolIterations int      `yaml:"max_tool_iterations"` // default 5
	MaxOutputBytes    int      `yaml:"max_output_bytes"`    // default 65536
	ToolTimeout       Duration `yaml:"tool_timeout"`        // default 60s
	// ElicitationTimeout bounds a tool call held open for a person's
	// input (MCP 2025-11-25 elicitation/create); default 10m.
	ElicitationTimeout Duration `yaml:"elicitation_timeout"`
	MaxBodyBytes       int64    `yaml:"max_body_bytes"` // default 1 MiB
	// MaxParallelTools bounds the independent tool calls of one model
	// round that run at once; 1 runs them one by one.
	MaxParallelTools int `yaml:"max_parallel_tools"` // default 4
	// The HTTP server's bounds, so a slow or idle client cannot hold a
	// connection forever.
	MaxConnections int `yaml:"max_connections"` // default 1024; past it, one waiting for a request is closed, else the next waits
	// MaxPendingPerClient bounds one client address's connections that
	// have not sent a request yet (default 64); a new one closes the
	// oldest.
	MaxPendingPerClient int      `yaml:"max_pending_per_client"`
	ReadTimeout         Duration `yaml:"read_timeout"`  // default 30s: reading a whole request, body included
	WriteTimeout        Duration `yaml:"write_timeout"` // default 60s: handling and answering (event streams excepted)
	IdleTimeout         Duration `yaml:"idle_timeout"`  // default 120s: a keep-alive connection between requests
}

// LogConfig is the log block.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug | info (default) | warn | error
	Format string `yaml:"format"` // text (default) | json
}

// TelemetryConfig is the telemetry block: OpenTelemetry traces.
type TelemetryConfig struct {
	// OTLPEndpoint is the OTLP/HTTP traces URL, e.g.
	// http://collector:4318/v1/traces; "" leaves it to the standard
	// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT variables, and tracing is off
	// when none is set.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	ServiceName  string `yaml:"service_name"` // default brain
}

// Storage drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// StorageConfig is the storage block: one SQLite file under data_dir (the
// default; one brain process), or a PostgreSQL database that several
// replicas share.
type StorageConfig struct {
	Driver string `yaml:"driver"` // sqlite (default) | postgres
	// DSN is the PostgreSQL connection string (postgres:// URL or libpq
	// key=value); postgres only. It may hold a password: a secret.
	DSN string `yaml:"dsn"`
	// Synchronous is SQLite's PRAGMA synchronous: full (default) | normal;
	// sqlite only.
	Synchronous string `yaml:"synchronous"`
	// LeaseTTL is how long a replica's lease on a session, an apply, a
	// delivery or an inbox item lasts without renewal: how long a dead
	// replica's work waits for another (default 30s); postgres only.
	LeaseTTL Duration `yaml:"lease_ttl"`
	// PollInterval is how often each replica looks for work others left
	// (input no replica took, expired leases; default 1s); postgres only.
	PollInterval Duration `yaml:"poll_interval"`
	// OutageGrace is how long a turn waits for an unreachable database
	// (connections refused or cut, a restart), retrying with backoff,
	// before it fails: acknowledged input is not cancelled by a shorter
	// outage (default 5m; 1s to 1h); both drivers.
	OutageGrace Duration `yaml:"outage_grace"`
}

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
