package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// envFrom returns a lookup function over m, standing in for os.LookupEnv.
func envFrom(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// loadYAML writes text to a temporary file and loads it.
func loadYAML(t *testing.T, text string, env map[string]string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path, envFrom(env))
}

// mustLoadYAML is loadYAML for configs that must be valid.
func mustLoadYAML(t *testing.T, text string, env map[string]string) *Config {
	t.Helper()
	c, err := loadYAML(t, text, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

const minimalYAML = `
models:
  default: {provider: anthropic, model: claude-sonnet-4-5}
agents:
  - name: default
`

func TestLoad_Example(t *testing.T) {
	c, err := Load(filepath.Join("..", "..", "config.example.yaml"), envFrom(nil))
	if err != nil {
		t.Fatalf("example config with no env: %v", err)
	}
	if got, want := c.MissingEnv(), []string{"ANTHROPIC_API_KEY"}; !slices.Equal(got, want) {
		t.Errorf("MissingEnv() = %q, want %q", got, want)
	}
	m := c.Models["default"]
	if m.Provider != "anthropic" || m.Model != "claude-sonnet-4-5" || m.APIKey != "" {
		t.Errorf("models.default = %+v", m)
	}
	// ./data in the example is relative to the example's directory.
	if c.Listen != "127.0.0.1:8080" || c.DataDir != filepath.Join("..", "..", "data") {
		t.Errorf("listen, data_dir = %q, %q", c.Listen, c.DataDir)
	}
	if _, ok := c.Agent("default"); !ok {
		t.Error(`no agent "default"`)
	}
	if s := c.Secrets(); len(s) != 0 {
		t.Errorf("Secrets() = %q, want none", s)
	}

	c, err = Load(filepath.Join("..", "..", "config.example.yaml"), envFrom(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MissingEnv(); len(got) != 0 {
		t.Errorf("MissingEnv() = %q, want none", got)
	}
	if got, want := c.Secrets(), []string{"sk-ant-test"}; !slices.Equal(got, want) {
		t.Errorf("Secrets() = %q, want %q", got, want)
	}
}

func TestLoad_Full(t *testing.T) {
	env := map[string]string{
		"BRAIN_API_KEY":         "brain-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f",
		"ANTHROPIC_API_KEY":     "sk-ant",
		"INSTRUCTIONS":          "be brief: {always}",
		"SLACK_BOT_TOKEN":       "xoxb-1",
		"SLACK_SIGNING_SECRET":  "slack-signing",
		"LINEAR_WEBHOOK_SECRET": "lin-wh",
		"LINEAR_ACCESS_TOKEN":   "lin-at",
		"TICKETS_TOKEN":         "tickets-token",
		"SEARCH_API_KEY":        "search-key",
		"GITHUB_TOKEN":          "ghp-1",
		"TRACKER_MCP_TOKEN":     "mcp-bearer",
	}
	c, err := Load(filepath.Join("testdata", "full.yaml"), envFrom(env))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MissingEnv(); len(got) != 0 {
		t.Errorf("MissingEnv() = %q", got)
	}

	def := c.Models["default"]
	if def.MaxTokens != 8192 || def.Timeout.Std() != 120*time.Second || def.Retries() != 0 || def.APIKey != "sk-ant" {
		t.Errorf("models.default = %+v", def)
	}
	big := c.Models["local-big"]
	if big.Provider != "openai" || big.Model != "qwen3:32b" || big.BaseURL != "http://127.0.0.1:11434/v1/" {
		t.Errorf("models.local-big (merged from &local) = %+v", big)
	}

	a, ok := c.Agent("default")
	if !ok {
		t.Fatal(`no agent "default"`)
	}
	if a.Instructions != "be brief: {always}" || a.Model != "default" || a.InputMode != "interrupt" ||
		a.ResultTool != "report" || a.MaxToolIterations != 3 {
		t.Errorf("agents[0] = %+v", a)
	}
	if a, _ := c.Agent("local"); a.MaxToolIterations != 9 {
		t.Errorf("agents[1].max_tool_iterations = %d, want 9", a.MaxToolIterations)
	}
	if !slices.Equal(a.Approvers, []string{"U123", "U456"}) {
		t.Errorf("agents[0].approvers = %q, want approvals.approvers", a.Approvers)
	}
	if m := c.Models["demo"]; m.Model != "fake-model" {
		t.Errorf("models.demo.model = %q, want fake-model for provider fake", m.Model)
	}

	if c.Slack.RepliesWithoutMention() || c.Slack.Agent != "default" || c.Slack.AppToken != "" {
		t.Errorf("slack = %+v", c.Slack)
	}
	if c.Linear.Agent != "local" || c.Linear.AccessToken != "lin-at" {
		t.Errorf("linear = %+v", c.Linear)
	}

	s := c.Schedules[0]
	if s.IsEnabled() || s.Overlap != "allow" || s.Timezone != "Europe/Paris" || s.PostTo.SlackChannel != "C0123456" {
		t.Errorf("schedules[0] = %+v", s)
	}
	if s := c.Schedules[1]; !s.IsEnabled() || s.Timezone != "UTC" || s.Agent != "local" || s.PostTo.LinearIssue != "ENG-1" {
		t.Errorf("schedules[1] = %+v", s)
	}

	h := c.Tools.HTTP[0]
	wantInput := `{"type":"object","properties":{"title":{"type":"string"},"priority":{"type":"integer"}},"required":["title"]}`
	if string(h.Input) != wantInput {
		t.Errorf("tools.http[0].input = %s, want %s (keys in YAML order)", h.Input, wantInput)
	}
	if string(h.Output) != `{"type":"object"}` || h.Method != "POST" || h.TimeoutMS != 10000 {
		t.Errorf("tools.http[0] = %+v", h)
	}
	if h.Headers["Authorization"] != "Bearer tickets-token" || h.Approval.Facts[0].Value != "{{.title}}" {
		t.Errorf("tools.http[0] headers, approval = %v, %+v", h.Headers, h.Approval)
	}
	if h := c.Tools.HTTP[1]; h.Method != "PUT" || h.TimeoutMS != 30000 || len(h.Input) != 0 {
		t.Errorf("tools.http[1] = %+v", h)
	}
	if w := c.Tools.WebFetch; w.MaxChars != 2000 || w.MaxBody != 5<<20 || !w.AllowPrivate {
		t.Errorf("tools.web_fetch = %+v", w)
	}
	if m := c.MCPServers; m[0].Transport != "stdio" || m[1].Transport != "http" || m[0].Env["GITHUB_TOKEN"] != "ghp-1" {
		t.Errorf("mcp_servers = %+v", m)
	}
	if c.Approvals.TTL.Std() != 24*time.Hour || !slices.Equal(c.Approvals.Approvers, []string{"U123", "U456"}) {
		t.Errorf("approvals = %+v", c.Approvals)
	}
	if c.Limits.ToolTimeout.Std() != 30*time.Second || c.Limits.MaxBodyBytes != 2048 {
		t.Errorf("limits = %+v", c.Limits)
	}
	if c.Log.SlogLevel().String() != "DEBUG" || c.Log.Format != "json" || c.Storage.Synchronous != "normal" {
		t.Errorf("log, storage = %+v, %+v", c.Log, c.Storage)
	}

	// Secrets: every expanded secret, header values from env only (not
	// "plain", not "Bearer "), plus literal keys ("ollama").
	want := []string{"brain-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f", "slack-signing", "tickets-token", "mcp-bearer", "search-key", "lin-at", "lin-wh", "ollama", "sk-ant", "xoxb-1", "ghp-1"}
	got := c.Secrets()
	if !slices.Equal(got, want) {
		t.Errorf("Secrets() = %q, want %q", got, want)
	}
}

func TestLoad_EnvExpansion(t *testing.T) {
	env := map[string]string{
		"A":     "hello",
		"EMPTY": "",
		"YAML":  "key: {}",
		"FLOW":  "[a, {b: c}]",
		"LINES": "x\nfoo: bar\n- y",
		"NUM":   "123",
		"NULL":  "null",
		"TRUE":  "true",
	}
	tests := []struct {
		name        string
		value       string // written as agents[0].instructions
		want        string
		wantMissing []string
	}{
		{"plain", "${A}", "hello", nil},
		{"embedded", "pre-${A}-post", "pre-hello-post", nil},
		{"yaml syntax stays a string", "${YAML}", "key: {}", nil},
		{"flow syntax stays a string", "${FLOW}", "[a, {b: c}]", nil},
		{"lines stay a string", "${LINES}", "x\nfoo: bar\n- y", nil},
		{"quoted", `"${A}!"`, "hello!", nil},
		{"number-like value into a string", "${NUM}", "123", nil},
		{"null-like value stays text", "${NULL}", "null", nil},
		{"bool-like value into a string", "${TRUE}", "true", nil},
		{"default when unset", "${NOPE:-fall back}", "fall back", nil},
		{"default when empty", "${EMPTY:-fallback}", "fallback", nil},
		{"empty default", "${NOPE:-}", "", nil},
		{"unset is empty and missing", "x${NOPE}y", "xy", []string{"NOPE"}},
		{"set but empty is not missing", "${EMPTY}", "", nil},
		{"missing names sorted, once", "${ZED}${NOPE}${ZED}", "", []string{"NOPE", "ZED"}},
		{"escaped", "$${A}", "${A}", nil},
		{"invalid name left as written", "'${not valid} ${A}'", "${not valid} hello", nil},
		{"unclosed left as written", "${A", "${A", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoadYAML(t, minimalYAML+"    instructions: "+tt.value+"\n", env)
			if got := c.Agents[0].Instructions; got != tt.want {
				t.Errorf("instructions = %q, want %q", got, tt.want)
			}
			if got := c.MissingEnv(); !slices.Equal(got, tt.wantMissing) {
				t.Errorf("MissingEnv() = %q, want %q", got, tt.wantMissing)
			}
		})
	}

	t.Run("typed values", func(t *testing.T) {
		c := mustLoadYAML(t, `
models:
  default: {provider: anthropic, model: "${NUM}", max_tokens: "${NUM}", timeout: "${T:-5s}", max_retries: "${NOPE}"}
agents:
  - name: default
    max_tool_iterations: ${NUM}
slack: {bot_token: b, app_token: a, reply_without_mention: "${NO:-false}"}
schedules: [{name: s, cron: "@daily", prompt: p, enabled: "${NOPE}"}]
tools:
  http:
    - {name: t, description: d, url: "http://127.0.0.1/", input: {type: object, properties: {n: {const: "${NUM}"}}}}
`, env)
		m := c.Models["default"]
		if m.Model != "123" || m.MaxTokens != 123 || m.Timeout.Std() != 5*time.Second || m.Retries() != 2 {
			t.Errorf("models.default = %+v", m)
		}
		if c.Agents[0].MaxToolIterations != 123 || c.Slack.RepliesWithoutMention() || !c.Schedules[0].IsEnabled() {
			t.Errorf("agents[0] = %+v, slack = %+v, schedules[0] = %+v", c.Agents[0], c.Slack, c.Schedules[0])
		}
		// Inside a JSON value an expanded value stays text.
		if got, want := string(c.Tools.HTTP[0].Input), `{"type":"object","properties":{"n":{"const":"123"}}}`; got != want {
			t.Errorf("input = %s, want %s", got, want)
		}
	})

	t.Run("not a number", func(t *testing.T) {
		_, err := loadYAML(t, minimalYAML+"limits:\n  max_running_turns: ${A}\n", env)
		if err == nil || !strings.Contains(err.Error(), `limits.max_running_turns (line 7): want an integer, got "hello"`) {
			t.Errorf("err = %v, want a type error naming line 7", err)
		}
	})

	t.Run("empty value means absent", func(t *testing.T) {
		c := mustLoadYAML(t, minimalYAML+"limits: {max_running_turns: \"${NOPE}\", tool_timeout: \"${NOPE}\"}\n", env)
		if c.Limits.MaxRunningTurns != 64 || c.Limits.ToolTimeout.Std() != time.Minute {
			t.Errorf("limits = %+v, want the defaults", c.Limits)
		}
	})

	t.Run("keys are not expanded", func(t *testing.T) {
		c := mustLoadYAML(t, minimalYAML+`
tools:
  http:
    - {name: t, description: d, url: "http://127.0.0.1/", headers: {"${A}": "${A}"}}
`, env)
		if got := c.Tools.HTTP[0].Headers; got["${A}"] != "hello" {
			t.Errorf("headers = %v", got)
		}
	})

	t.Run("a value cannot become structure", func(t *testing.T) {
		_, err := loadYAML(t, minimalYAML+"mcp_servers: ${LIST}\n", map[string]string{"LIST": "[{id: evil, command: sh}]"})
		if err == nil || !strings.Contains(err.Error(), `mcp_servers (line 6): want a list, got "[{id: evil, command: sh}]"`) {
			t.Errorf("err = %v, want a type error", err)
		}
	})
}

func TestLoad_UnknownKey(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"top level", minimalYAML + "lisen: 127.0.0.1:1\n", []string{"lisen: unknown key (line 6)"}},
		{"agent", minimalYAML + "    tols: [ask]\n", []string{"agents[0].tols: unknown key (line 6)"}},
		{"model", "models:\n  default: {provider: fake, api-key: x}\nagents: [{name: default}]\n", []string{"models.default.api-key: unknown key (line 2)"}},
		{"nested", minimalYAML + `tools:
  http:
    - name: t
      approval: {titel: x}
`, []string{"tools.http[0].approval.titel: unknown key (line 9)"}},
		{"all reported", minimalYAML + "foo: 1\nbar: 2\n", []string{"foo: unknown key (line 6)", "bar: unknown key (line 7)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, tt.yaml, nil)
			if err == nil {
				t.Fatal("Load accepted an unknown key")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoad_Durations(t *testing.T) {
	tests := []struct {
		value string
		want  string // error substring; empty = valid
	}{
		{"90s", ""},
		{"1h30m", ""},
		{`""`, ""},
		{"120", `models.default.timeout (line 3): want a duration like 120s, got "120"`},
		{"soon", `models.default.timeout (line 3): want a duration like 120s, got "soon"`},
		{"[1s]", "models.default.timeout (line 3): want a duration like 120s, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			_, err := loadYAML(t, "\nmodels:\n  default: {provider: fake, timeout: "+tt.value+"}\nagents: [{name: default}]\n", nil)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoad_BadFiles(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml"), envFrom(nil)); err == nil {
		t.Error("missing file accepted")
	}
	tests := []struct{ name, yaml, want string }{
		{"empty", "", "models: at least one model is required"},
		{"list", "- a\n", "line 1: the top level must be a mapping"},
		{"syntax", "listen: [\n", "yaml: "},
		{"duplicate key", minimalYAML + "listen: a\nlisten: b\n", `"listen" already defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, tt.yaml, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoad_AgentTools(t *testing.T) {
	c := mustLoadYAML(t, `
models: {default: {provider: fake}}
agents:
  - name: default
    tools: [ask, web_fetch]
    when:
      - {input_matches: "(?i)refund", tools: [issue_refund, ask]}
      - {input_matches: "^ticket", tools: [create_ticket]}
`, nil)
	a, _ := c.Agent("default")
	tests := []struct {
		input string
		want  []bool // does each when block match
	}{
		{"hello", []bool{false, false}},
		{"please REFUND me", []bool{true, false}},
		{"ticket for a refund", []bool{true, true}},
	}
	for _, tt := range tests {
		for i, want := range tt.want {
			if got := a.When[i].Matches(tt.input); got != want {
				t.Errorf("when[%d].Matches(%q) = %v, want %v", i, tt.input, got, want)
			}
		}
	}
	if _, ok := c.Agent("nobody"); ok {
		t.Error(`Agent("nobody") found an agent`)
	}
}

func TestLoad_VersionedTools(t *testing.T) {
	c := mustLoadYAML(t, `
models: {default: {provider: fake}}
agents:
  - name: default
    tools: [web_search_20250305, web_fetch]
    when: [{input_matches: x, tools: [sandbox_exec_20250101]}]
tools:
  web_search_20250305: {provider: searxng, endpoint: "http://127.0.0.1:8888"}
`, nil)
	if c.Tools.WebSearch == nil || c.Tools.WebSearch.Provider != "searxng" {
		t.Errorf("tools.web_search = %+v", c.Tools.WebSearch)
	}
	if got, want := append(slices.Clone(c.Agents[0].Tools), c.Agents[0].When[0].Tools...), []string{"web_search", "web_fetch", "sandbox_exec"}; !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}

	_, err := loadYAML(t, minimalYAML+"tools:\n  web_fetch: {}\n  web_fetch_20250910: {}\n", nil)
	if err == nil || !strings.Contains(err.Error(), "tools.web_fetch_20250910: configures web_fetch again (line 8, first at line 7)") {
		t.Errorf("err = %v, want a duplicate web_fetch error", err)
	}
}

func TestLoad_GitHubTokenFromEnv(t *testing.T) {
	yaml := `
models: {default: {provider: fake}}
agents: [{name: default}]
tools:
  github:
    token: ${GITHUB_TOKEN}
    repos: [acme/widgets]
`
	c, err := loadYAML(t, yaml, map[string]string{"GITHUB_TOKEN": "github_pat_11AAAAAAA0"})
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Tools.GitHub; g == nil || g.Token != "github_pat_11AAAAAAA0" || !slices.Equal(g.Repos, []string{"acme/widgets"}) {
		t.Fatalf("tools.github = %+v", c.Tools.GitHub)
	}
	if got := c.Secrets(); !slices.Contains(got, "github_pat_11AAAAAAA0") {
		t.Errorf("Secrets() = %q, want the GitHub token", got)
	}
	_, err = loadYAML(t, yaml, nil)
	if err == nil || !strings.Contains(err.Error(), "tools.github.token: required, but the environment variable GITHUB_TOKEN is not set") {
		t.Fatalf("Load without GITHUB_TOKEN: %v", err)
	}
}

func TestLoad_RelativeDataDirIsUnderTheConfigsDirectory(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		minimalYAML + "data_dir: state\n":          filepath.Join(dir, "state"),
		minimalYAML + "data_dir: ./a/../b\n":       filepath.Join(dir, "b"),
		minimalYAML:                                filepath.Join(dir, "data"),
		minimalYAML + "data_dir: /var/lib/brain\n": "/var/lib/brain",
	} {
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, envFrom(nil))
		if err != nil {
			t.Fatal(err)
		}
		if c.DataDir != want {
			t.Errorf("data_dir = %q, want %q", c.DataDir, want)
		}
	}
}

func TestLoad_TypeErrorsNameKeyAndLineAndHideNothing(t *testing.T) {
	_, err := loadYAML(t, `models:
  default: {provider: fake, max_tokens: lots}
agents: [{name: default, model: nope}]
limits:
  max_running_turns: many
  tool_timeout: soon
slack: [1, 2]
api_keys: {a: b}
lisen: x
`, nil)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`models.default.max_tokens (line 2): want an integer, got "lots"`,
		`limits.max_running_turns (line 5): want an integer, got "many"`,
		`limits.tool_timeout (line 6): want a duration like 120s, got "soon"`,
		`slack (line 7): want a mapping, got a list`,
		`api_keys (line 8): want a list, got a mapping`,
		`lisen: unknown key (line 9)`,
		`agents[0].model: "nope" is not a key of models`, // Validate still ran
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	// The blanked values are not reported a second time.
	if strings.Count(err.Error(), "limits.max_running_turns") != 1 || strings.Contains(err.Error(), "cannot unmarshal") {
		t.Errorf("repeated or raw type error:\n%v", err)
	}
	if t.Failed() {
		t.Log(err)
	}
}

func TestConfig_MissingEnvUsesNameTheKeys(t *testing.T) {
	c := mustLoadYAML(t, `models:
  default: {provider: anthropic, model: m, api_key: "${KEY}"}
  other: {provider: anthropic, model: m, api_key: "${KEY}", base_url: "${BASE:-http://127.0.0.1:1}"}
agents: [{name: default}]
`, nil)
	got := c.MissingEnvUses()
	if len(got) != 1 || got[0].String() != "KEY (used by models.default.api_key, models.other.api_key)" {
		t.Fatalf("MissingEnvUses = %v", got)
	}
}
