package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/robfig/cron/v3"
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
	TimeoutMS    int   `yaml:"timeout_ms"` // default limits.tool_timeout
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

func appendJSON(b []byte, n *yaml.Node) ([]byte, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return append(b, "null"...), nil
		}
		return appendJSON(b, n.Content[0])
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, c); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case yaml.MappingNode:
		if !hasMergeKey(n) {
			b = append(b, '{')
			for i := 0; i+1 < len(n.Content); i += 2 {
				if i > 0 {
					b = append(b, ',')
				}
				k, _ := json.Marshal(n.Content[i].Value)
				b = append(append(b, k...), ':')
				var err error
				if b, err = appendJSON(b, n.Content[i+1]); err != nil {
					return nil, err
				}
			}
			return append(b, '}'), nil
		}
	}
	// Scalars, aliases and merges: let the YAML decoder (and its alias
	// safeguards) produce the value.
	var x any
	if err := n.Decode(&x); err != nil {
		return nil, err
	}
	j, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %w", err)
	}
	return append(b, j...), nil
}

func hasMergeKey(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].ShortTag() == "!!merge" {
			return true
		}
	}
	return false
}

// LoadConfig reads the YAML file at path, expands ${VAR} and ${VAR:-default}
// in scalar values with env (callers pass os.LookupEnv), rejects unknown keys,
// applies defaults and validates. An unset variable expands to "" and is
// reported by MissingEnv rather than failing, so a daemon without, say, its
// model key still boots.
func LoadConfig(path string, env func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := parseConfig(data, env)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	c.ApplyDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	return c, nil
}

func parseConfig(data []byte, env func(string) (string, bool)) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	c := &Config{}
	if root.Kind == 0 {
		return c, nil // empty file: Validate reports what is missing
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the top level must be a mapping of keys", doc.Line)
	}

	// Expanding in the node tree, after parsing, means a variable's value is
	// always one scalar: YAML syntax in it cannot add keys or change the type
	// of a neighbouring value.
	x := &expander{env: env, missing: map[string]bool{}, unsetAt: map[string][]string{}, expanded: map[*yaml.Node]bool{}}
	x.walk(doc, "")

	// yaml.Node.Decode ignores KnownFields, so unknown keys are found by
	// walking the tree against the Go types, which also names the key path.
	tw := &typedWalk{expanded: x.expanded}
	tw.errs = canonicalToolKeys(doc)
	tw.walk(doc, reflect.TypeFor[Config](), "")
	errs := tw.errs
	if err := root.Decode(c); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for name := range x.missing {
		c.missingEnv = append(c.missingEnv, name)
	}
	slices.Sort(c.missingEnv)
	c.unsetAt = x.unsetAt
	c.headerEnv = x.headerEnv
	return c, nil
}

// versionedTool matches a built-in's versioned type, as in web_search_20250305.
var versionedTool = regexp.MustCompile(`^(web_search|web_fetch|sandbox_exec)_\d{8}$`)

// CanonicalTool returns the canonical name of a built-in tool type:
// web_search_20250305 -> web_search. Other names are returned as they are.
func CanonicalTool(name string) string {
	if m := versionedTool.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

// canonicalToolKeys renames versioned built-in keys under tools to their
// canonical key, so tools.web_search_20250305 configures web_search.
func canonicalToolKeys(doc *yaml.Node) []error {
	var tools *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "tools" && doc.Content[i+1].Kind == yaml.MappingNode {
			tools = doc.Content[i+1]
		}
	}
	if tools == nil {
		return nil
	}
	var errs []error
	seen := map[string]int{} // canonical key -> line
	for i := 0; i+1 < len(tools.Content); i += 2 {
		k := tools.Content[i]
		name := CanonicalTool(k.Value)
		if line, dup := seen[name]; dup {
			errs = append(errs, fmt.Errorf("tools.%s: configures %s again (line %d, first at line %d)", k.Value, name, k.Line, line))
		}
		seen[name] = k.Line
		k.Value = name
	}
	return errs
}

// MissingEnv returns the names of referenced environment variables that were
// unset (and had no ${VAR:-default}), sorted.
func (c *Config) MissingEnv() []string { return slices.Clone(c.missingEnv) }

var (
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerPath     = regexp.MustCompile(`^tools\.http\[\d+\]\.headers\.`)
)

type expander struct {
	env       func(string) (string, bool)
	missing   map[string]bool
	unsetAt   map[string][]string
	headerEnv []string
	expanded  map[*yaml.Node]bool
}

// walk expands scalar values under n. Mapping keys are left alone, and alias
// nodes too: their anchor is expanded where it is defined.
func (x *expander) walk(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			x.walk(c, path)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := path
			if k.ShortTag() != "!!merge" {
				p = joinKey(path, k.Value)
			}
			x.walk(n.Content[i+1], p)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			x.walk(c, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		x.scalar(n, path)
	}
}

// scalar expands one value. The result is text (a plain `${N}` is not
// re-read as YAML); typedWalk converts it where the key wants a number or a
// bool, which also lets `{max_tokens: "${N}"}` work in flow style, where the
// braces must be quoted.
func (x *expander) scalar(n *yaml.Node, path string) {
	if !strings.Contains(n.Value, "${") {
		return
	}
	value, fromEnv, unset := expandEnv(n.Value, x.env)
	for _, name := range unset {
		x.missing[name] = true
	}
	if len(unset) > 0 {
		x.unsetAt[path] = unset
	}
	if headerPath.MatchString(path) {
		x.headerEnv = append(x.headerEnv, fromEnv...)
	}
	n.Value = value
	if n.Style&yaml.TaggedStyle == 0 {
		n.Tag = "!!str"
		x.expanded[n] = true
	}
}

// expandEnv replaces ${VAR} and ${VAR:-default} (default when VAR is unset or
// empty) in s; "$${" is a literal "${". A reference that is not a valid name
// stays as written. It returns the non-empty values taken from env and the
// names that were unset without a default.
func expandEnv(s string, env func(string) (string, bool)) (out string, fromEnv, unset []string) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), fromEnv, unset
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			b.WriteString(s)
			return b.String(), fromEnv, unset
		}
		name, def, hasDef := strings.Cut(s[i+2:i+2+end], ":-")
		if !envNamePattern.MatchString(name) {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		v, ok := env(name)
		switch {
		case v != "":
			fromEnv = append(fromEnv, v)
		case hasDef:
			v = def
		case !ok:
			unset = append(unset, name)
		}
		b.WriteString(v)
		s = s[i+2+end+1:]
	}
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// typedWalk walks the node tree along the Go type it decodes into. It reports
// mapping keys that have no field, and turns expanded text back into a YAML
// value where the field is a number or a bool ("" = absent). Merge keys and
// aliases are skipped: their anchor is checked where it is defined.
type typedWalk struct {
	expanded map[*yaml.Node]bool
	errs     []error
}

func (w *typedWalk) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch {
	case n.Kind == yaml.ScalarNode && w.expanded[n]:
		switch t.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			n.Tag, n.Style = "", 0
			if n.Value == "" {
				n.Tag = "!!null"
			}
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := map[string]reflect.Type{}
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.IsExported() && name != "" {
				fields[name] = f.Type
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.ShortTag() == "!!merge" {
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				w.errs = append(w.errs, fmt.Errorf("%s: unknown key (line %d)", joinKey(path, k.Value), k.Line))
				continue
			}
			w.walk(n.Content[i+1], ft, joinKey(path, k.Value))
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.ShortTag() != "!!merge" {
				w.walk(n.Content[i+1], t.Elem(), joinKey(path, k.Value))
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

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
		setDefault(&w.TimeoutMS, toolTimeoutMS)
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

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate reports every problem at once (errors.Join), each prefixed with the
// key path, e.g. `agents[0].model: "big" is not a key of models`. It compiles
// the agents' when.input_matches. Call ApplyDefaults first.
func (c *Config) Validate() error {
	var p problems
	p.unsetAt = c.unsetAt

	c.validateListen(&p)
	if c.DataDir == "" {
		p.add("data_dir", "required")
	}
	for i, k := range c.APIKeys {
		if k == "" {
			p.required(fmt.Sprintf("api_keys[%d]", i), "")
		}
	}
	oneOf(&p, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf(&p, "log.format", c.Log.Format, "text", "json")
	oneOf(&p, "storage.synchronous", c.Storage.Synchronous, "full", "normal")
	c.validateModels(&p)
	c.validateAgents(&p)
	c.validateChannels(&p)
	c.validateSchedules(&p)
	c.validateTools(&p)
	c.validateMCP(&p)

	for i, a := range c.Approvals.Approvers {
		if a == "" {
			p.add(fmt.Sprintf("approvals.approvers[%d]", i), "must not be empty")
		}
	}
	atLeast(&p, "approvals.ttl", int64(c.Approvals.TTL), 1, "a positive duration")
	l := c.Limits
	atLeast(&p, "limits.max_running_turns", int64(l.MaxRunningTurns), 1, "")
	atLeast(&p, "limits.max_queued_turns", int64(l.MaxQueuedTurns), 1, "")
	atLeast(&p, "limits.max_tool_iterations", int64(l.MaxToolIterations), 1, "")
	atLeast(&p, "limits.max_output_bytes", int64(l.MaxOutputBytes), 1, "")
	atLeast(&p, "limits.tool_timeout", int64(l.ToolTimeout), 1, "a positive duration")
	atLeast(&p, "limits.max_body_bytes", l.MaxBodyBytes, 1, "")
	return errors.Join(p.errs...)
}

func (c *Config) validateListen(p *problems) {
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		p.add("listen", "want host:port: %v", err)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.add("listen", "invalid port %q", port)
	}
	if len(c.APIKeys) == 0 && !isLoopbackHost(host) {
		p.add("listen", "%s is not a loopback address; set api_keys to require bearer keys", c.Listen)
	}
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func (c *Config) validateModels(p *problems) {
	if len(c.Models) == 0 {
		p.add("models", "at least one model is required")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
		m, key := c.Models[name], "models."+name
		oneOf(p, key+".provider", m.Provider, "anthropic", "openai", "fake")
		if m.Model == "" && m.Provider != "fake" {
			p.add(key+".model", "required")
		}
		checkURL(p, key+".base_url", m.BaseURL, false)
		atLeast(p, key+".max_tokens", int64(m.MaxTokens), 1, "")
		atLeast(p, key+".timeout", int64(m.Timeout), 1, "a positive duration")
		if m.MaxRetries != nil && *m.MaxRetries < 0 {
			p.add(key+".max_retries", "must be >= 0")
		}
	}
}

func (c *Config) validateAgents(p *problems) {
	if len(c.Agents) == 0 {
		p.add("agents", "at least one agent is required")
	}
	seen := map[string]bool{}
	for i := range c.Agents {
		a, key := &c.Agents[i], fmt.Sprintf("agents[%d]", i)
		switch {
		case a.Name == "":
			p.add(key+".name", "required")
		case !namePattern.MatchString(a.Name):
			p.add(key+".name", "%q: use letters, digits, _ and -", a.Name)
		case seen[a.Name]:
			p.add(key+".name", "duplicate %q", a.Name)
		}
		seen[a.Name] = true
		if _, ok := c.Models[a.Model]; !ok {
			p.add(key+".model", "%q is not a key of models", a.Model)
		}
		checkToolNames(p, key+".tools", a.Tools)
		for j := range a.When {
			w, wkey := &a.When[j], fmt.Sprintf("%s.when[%d]", key, j)
			if w.InputMatches == "" {
				p.add(wkey+".input_matches", "required")
			} else if re, err := regexp.Compile(w.InputMatches); err != nil {
				p.add(wkey+".input_matches", "invalid regexp: %v", err)
			} else {
				w.re = re
			}
			if len(w.Tools) == 0 {
				p.add(wkey+".tools", "required")
			}
			checkToolNames(p, wkey+".tools", w.Tools)
		}
		if a.ResultTool != "" && !namePattern.MatchString(a.ResultTool) {
			p.add(key+".result_tool", "%q is not a valid tool name", a.ResultTool)
		}
		atLeast(p, key+".max_tool_iterations", int64(a.MaxToolIterations), 1, "")
		oneOf(p, key+".input_mode", a.InputMode, "queue", "interrupt")
	}
}

func checkToolNames(p *problems, key string, names []string) {
	for i, n := range names {
		if !namePattern.MatchString(n) {
			p.add(fmt.Sprintf("%s[%d]", key, i), "%q is not a valid tool name", n)
		}
	}
}

func (c *Config) validateChannels(p *problems) {
	if s := c.Slack; s != nil {
		p.required("slack.bot_token", s.BotToken)
		if s.AppToken == "" { // Socket Mode needs no signing secret
			p.required("slack.signing_secret", s.SigningSecret)
		}
		checkURL(p, "slack.api_url", s.APIURL, false)
		c.checkAgent(p, "slack.agent", s.Agent)
	}
	if l := c.Linear; l != nil {
		p.required("linear.webhook_secret", l.WebhookSecret)
		p.required("linear.access_token", l.AccessToken)
		checkURL(p, "linear.api_url", l.APIURL, false)
		c.checkAgent(p, "linear.agent", l.Agent)
	}
}

func (c *Config) checkAgent(p *problems, key, name string) {
	if _, ok := c.Agent(name); !ok {
		p.add(key, "%q is not the name of an agent", name)
	}
}

func (c *Config) validateSchedules(p *problems) {
	seen := map[string]bool{}
	for i, s := range c.Schedules {
		key := fmt.Sprintf("schedules[%d]", i)
		switch {
		case s.Name == "":
			p.add(key+".name", "required")
		case !namePattern.MatchString(s.Name):
			p.add(key+".name", "%q: use letters, digits, _ and -", s.Name)
		case seen[s.Name]:
			p.add(key+".name", "duplicate %q", s.Name)
		}
		seen[s.Name] = true
		if strings.HasPrefix(s.Cron, "TZ=") || strings.HasPrefix(s.Cron, "CRON_TZ=") {
			p.add(key+".cron", "set the time zone with timezone, not in cron")
		} else if _, err := cron.ParseStandard(s.Cron); err != nil {
			p.add(key+".cron", "%q: %v", s.Cron, err)
		}
		if _, err := time.LoadLocation(s.Timezone); err != nil {
			p.add(key+".timezone", "unknown time zone %q", s.Timezone)
		}
		c.checkAgent(p, key+".agent", s.Agent)
		if strings.TrimSpace(s.Prompt) == "" {
			p.add(key+".prompt", "required")
		}
		oneOf(p, key+".overlap", s.Overlap, "skip", "allow")
		if s.PostTo.SlackChannel != "" && c.Slack == nil {
			p.add(key+".post_to.slack_channel", "needs the slack block")
		}
		if s.PostTo.LinearIssue != "" && c.Linear == nil {
			p.add(key+".post_to.linear_issue", "needs the linear block")
		}
	}
}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

func (c *Config) validateTools(p *problems) {
	seen := map[string]bool{}
	for i, h := range c.Tools.HTTP {
		key := fmt.Sprintf("tools.http[%d]", i)
		switch {
		case h.Name == "":
			p.add(key+".name", "required")
		case !namePattern.MatchString(h.Name):
			p.add(key+".name", "%q: use letters, digits, _ and -", h.Name)
		case seen[h.Name]:
			p.add(key+".name", "duplicate tool name %q", h.Name)
		}
		seen[h.Name] = true
		if strings.TrimSpace(h.Description) == "" {
			p.add(key+".description", "required")
		}
		checkSchema(p, key+".input", h.Input)
		checkSchema(p, key+".output", h.Output)
		if !slices.Contains(httpMethods, h.Method) {
			p.add(key+".method", "must be one of %s, got %q", strings.Join(httpMethods, ", "), h.Method)
		}
		checkURL(p, key+".url", h.URL, true)
		atLeast(p, key+".timeout_ms", int64(h.TimeoutMS), 1, "")
		if a := h.Approval; a != nil {
			if a.Title == "" {
				p.add(key+".approval.title", "required")
			}
			checkTemplate(p, key+".approval.title", a.Title)
			for j, f := range a.Facts {
				fkey := fmt.Sprintf("%s.approval.facts[%d]", key, j)
				if f.Label == "" {
					p.add(fkey+".label", "required")
				}
				checkTemplate(p, fkey+".value", f.Value)
			}
		}
	}
	if w := c.Tools.WebSearch; w != nil {
		oneOf(p, "tools.web_search.provider", w.Provider, "tavily", "brave", "searxng", "ollama", "mojeek", "marginalia")
		checkURL(p, "tools.web_search.endpoint", w.Endpoint, false)
		atLeast(p, "tools.web_search.max_results", int64(w.MaxResults), 1, "")
		atLeast(p, "tools.web_search.timeout_ms", int64(w.TimeoutMS), 1, "")
	}
	if w := c.Tools.WebFetch; w != nil {
		atLeast(p, "tools.web_fetch.max_chars", int64(w.MaxChars), 1, "")
		atLeast(p, "tools.web_fetch.max_body", w.MaxBody, 1, "")
		atLeast(p, "tools.web_fetch.timeout_ms", int64(w.TimeoutMS), 1, "")
	}
	if s := c.Tools.SandboxExec; s != nil && (s.TimeoutSeconds < 1 || s.TimeoutSeconds > maxSandboxTimeout) {
		p.add("tools.sandbox_exec.timeout_seconds", "must be between 1 and %d", maxSandboxTimeout)
	}
}

func checkSchema(p *problems, key string, v JSONValue) {
	if len(v) > 0 && v[0] != '{' {
		p.add(key, "must be a JSON Schema object")
	}
}

func checkTemplate(p *problems, key, text string) {
	if _, err := template.New(key).Parse(text); err != nil {
		p.add(key, "invalid template: %v", err)
	}
}

func (c *Config) validateMCP(p *problems) {
	seen := map[string]bool{}
	for i, m := range c.MCPServers {
		key := fmt.Sprintf("mcp_servers[%d]", i)
		switch {
		case m.ID == "":
			p.add(key+".id", "required")
		case !namePattern.MatchString(m.ID) || strings.Contains(m.ID, "__"):
			p.add(key+".id", "%q: use letters, digits, _ and - (not __, the tool name separator)", m.ID)
		case seen[m.ID]:
			p.add(key+".id", "duplicate %q", m.ID)
		}
		seen[m.ID] = true
		switch m.Transport {
		case "stdio":
			p.required(key+".command", m.Command)
		case "http":
			checkURL(p, key+".url", m.URL, true)
		default:
			p.add(key+".transport", "must be stdio or http, got %q", m.Transport)
		}
	}
}

// checkURL reports a value that is not an absolute http(s) URL; empty is
// allowed unless required.
func checkURL(p *problems, key, s string, required bool) {
	if s == "" {
		if required {
			p.required(key, s)
		}
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(key, "%q is not an http or https URL", s)
	}
}

func oneOf(p *problems, key, v string, allowed ...string) {
	if slices.Contains(allowed, v) {
		return
	}
	list := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	p.add(key, "must be %s, got %q", list, v)
}

func atLeast(p *problems, key string, v, lo int64, what string) {
	if v >= lo {
		return
	}
	if what != "" {
		p.add(key, "must be %s", what)
		return
	}
	p.add(key, "must be >= %d", lo)
}

type problems struct {
	errs    []error
	unsetAt map[string][]string
}

func (p *problems) add(key, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
}

// required reports an empty value, naming the unset variables it came from.
func (p *problems) required(key, v string) {
	if v != "" {
		return
	}
	if vars := p.unsetAt[key]; len(vars) > 0 {
		p.add(key, "required, but the environment variable %s is not set", strings.Join(vars, ", "))
		return
	}
	p.add(key, "required")
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

// ToolsFor returns the tool names the agent offers for input: Tools, then the
// tools of each when block whose input_matches matches, without duplicates.
func (a *AgentConfig) ToolsFor(input string) []string {
	out := slices.Clone(a.Tools)
	for i := range a.When {
		if a.When[i].Matches(input) {
			out = append(out, a.When[i].Tools...)
		}
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(n string) bool {
		dup := seen[n]
		seen[n] = true
		return dup
	})
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

// Secrets returns every non-empty secret value in the config, without
// duplicates, longest first so a scrubber replaces "abc123" before "abc":
// model api keys, api_keys, values substituted from the environment into
// tools.http headers, Slack and Linear tokens and secrets, MCP bearer tokens
// and env values, and the web_search api key.
func (c *Config) Secrets() []string {
	var s []string
	for _, m := range c.Models {
		s = append(s, m.APIKey)
	}
	s = append(s, c.APIKeys...)
	s = append(s, c.headerEnv...)
	if sl := c.Slack; sl != nil {
		s = append(s, sl.BotToken, sl.SigningSecret, sl.AppToken)
	}
	if l := c.Linear; l != nil {
		s = append(s, l.WebhookSecret, l.AccessToken)
	}
	for _, m := range c.MCPServers {
		s = append(s, m.BearerToken)
		for _, v := range m.Env {
			s = append(s, v)
		}
	}
	if w := c.Tools.WebSearch; w != nil {
		s = append(s, w.APIKey)
	}
	s = slices.DeleteFunc(s, func(v string) bool { return v == "" })
	slices.SortFunc(s, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(s)
}
