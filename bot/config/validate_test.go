package config

import (
	"strings"
	"testing"
	"time"
)

// validConfig is a Config, built in Go, that passes Validate.
func validConfig() *Config {
	return &Config{
		Models: map[string]ModelConfig{"default": {Provider: "anthropic", Model: "m"}},
		Agents: []AgentConfig{{Name: "default"}},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"no models", func(c *Config) { c.Models = nil }, "models: at least one model is required"},
		{"no agents", func(c *Config) { c.Agents = nil }, "agents: at least one agent is required"},
		{"unknown model", func(c *Config) { c.Agents[0].Model = "big" }, `agents[0].model: "big" is not a key of models`},
		{"provider", func(c *Config) { c.Models["default"] = ModelConfig{Provider: "x", Model: "m"} },
			`models.default.provider: must be anthropic, openai or fake, got "x"`},
		{"model name", func(c *Config) { c.Models["default"] = ModelConfig{Provider: "openai"} }, "models.default.model: required"},
		{"base url", func(c *Config) {
			c.Models["default"] = ModelConfig{Provider: "openai", Model: "m", BaseURL: "localhost:11434"}
		},
			"models.default.base_url: "},
		{"retries", func(c *Config) { c.Models["default"] = ModelConfig{Provider: "fake", MaxRetries: ptr(-1)} },
			"models.default.max_retries: must be >= 0"},
		{"running turns", func(c *Config) { c.Limits.MaxRunningTurns = -1 }, "limits.max_running_turns: must be >= 1"},
		{"queued turns", func(c *Config) { c.Limits.MaxQueuedTurns = -1 }, "limits.max_queued_turns: must be >= 1"},
		{"tool timeout", func(c *Config) { c.Limits.ToolTimeout = Duration(-time.Second) }, "limits.tool_timeout: must be a positive duration"},
		{"duplicate agent", func(c *Config) { c.Agents = append(c.Agents, AgentConfig{Name: "x"}, AgentConfig{Name: "x"}) },
			`agents[2].name: duplicate "x"`},
		{"agent name", func(c *Config) { c.Agents[0].Name = "a b" }, `agents[0].name: "a b"`},
		{"too many prompts", func(c *Config) { c.Agents[0].Slack.SuggestedPrompts = []string{"a", "b", "c", "d", "e"} },
			"agents[0].slack.suggested_prompts: 5 prompts; Slack shows at most 4"},
		{"blank prompt", func(c *Config) { c.Agents[0].Slack.SuggestedPrompts = []string{"ok", " "} },
			"agents[0].slack.suggested_prompts[1]: must be 1..300 characters"},
		{"regexp", func(c *Config) { c.Agents[0].When = []WhenConfig{{InputMatches: "(", Tools: []string{"t"}}} },
			"agents[0].when[0].input_matches: invalid regexp: "},
		{"when tools", func(c *Config) { c.Agents[0].When = []WhenConfig{{InputMatches: "x"}} }, "agents[0].when[0].tools: required"},
		{"tool name", func(c *Config) { c.Agents[0].Tools = []string{"ok", "not ok"} }, `agents[0].tools[1]: "not ok" is not a valid tool name`},
		{"input mode", func(c *Config) { c.Agents[0].InputMode = "steer" }, "agents[0].input_mode: must be queue or interrupt"},
		{"agent iterations", func(c *Config) { c.Agents[0].MaxToolIterations = -2 }, "agents[0].max_tool_iterations: must be >= 1"},
		{"listen", func(c *Config) { c.Listen = "0.0.0.0:8080" },
			"listen: 0.0.0.0:8080 is not a loopback address; set api_keys to require bearer keys"},
		{"listen port", func(c *Config) { c.Listen = "127.0.0.1:http-alt" }, `listen: invalid port "http-alt"`},
		{"listen form", func(c *Config) { c.Listen = "8080" }, "listen: want host:port"},
		{"empty api key", func(c *Config) { c.APIKeys = []APIKey{{}} }, "api_keys[0].key: required"},
		{"cron", func(c *Config) { c.Schedules = []ScheduleConfig{{Name: "s", Cron: "0 9 * *", Prompt: "p"}} }, `schedules[0].cron: "0 9 * *": `},
		{"cron tz", func(c *Config) { c.Schedules = []ScheduleConfig{{Name: "s", Cron: "TZ=UTC 0 9 * * *", Prompt: "p"}} },
			"schedules[0].cron: set the time zone with timezone"},
		{"timezone", func(c *Config) {
			c.Schedules = []ScheduleConfig{{Name: "s", Cron: "@daily", Timezone: "Mars/Olympus", Prompt: "p"}}
		},
			`schedules[0].timezone: unknown time zone "Mars/Olympus"`},
		{"schedule agent", func(c *Config) {
			c.Schedules = []ScheduleConfig{{Name: "s", Cron: "@daily", Agent: "nobody", Prompt: "p"}}
		},
			`schedules[0].agent: "nobody" is not the name of an agent`},
		{"schedule prompt", func(c *Config) { c.Schedules = []ScheduleConfig{{Name: "s", Cron: "@daily"}} }, "schedules[0].prompt: required"},
		{"schedule overlap", func(c *Config) {
			c.Schedules = []ScheduleConfig{{Name: "s", Cron: "@daily", Prompt: "p", Overlap: "queue"}}
		},
			"schedules[0].overlap: must be skip or allow"},
		{"duplicate schedule", func(c *Config) {
			c.Schedules = []ScheduleConfig{{Name: "s", Cron: "@daily", Prompt: "p"}, {Name: "s", Cron: "@daily", Prompt: "p"}}
		}, `schedules[1].name: duplicate "s"`},
		{"post to slack without slack", func(c *Config) {
			c.Schedules = []ScheduleConfig{{Name: "s", Cron: "@daily", Prompt: "p", PostTo: PostToConfig{SlackChannel: "C1"}}}
		}, "schedules[0].post_to.slack_channel: needs the slack block"},
		{"duplicate http tool", func(c *Config) {
			c.Tools.HTTP = []HTTPToolConfig{{Name: "t", Description: "d", URL: "http://x/"}, {Name: "t", Description: "d", URL: "http://x/"}}
		}, `tools.http[1].name: duplicate tool name "t"`},
		{"http tool url", func(c *Config) { c.Tools.HTTP = []HTTPToolConfig{{Name: "t", Description: "d", URL: "ftp://x/"}} },
			`tools.http[0].url: "ftp://x/" is not an http or https URL`},
		{"http tool method", func(c *Config) {
			c.Tools.HTTP = []HTTPToolConfig{{Name: "t", Description: "d", URL: "http://x/", Method: "FETCH"}}
		},
			"tools.http[0].method: must be one of"},
		{"http tool input", func(c *Config) {
			c.Tools.HTTP = []HTTPToolConfig{{Name: "t", Description: "d", URL: "http://x/", Input: JSONValue(`"string"`)}}
		}, "tools.http[0].input: must be a JSON Schema object"},
		{"approval title", func(c *Config) {
			c.Tools.HTTP = []HTTPToolConfig{{Name: "t", Description: "d", URL: "http://x/", Approval: &ApprovalCardConfig{Title: "Create {{.title"}}}
		}, "tools.http[0].approval.title: invalid template: "},
		{"approval fact", func(c *Config) {
			c.Tools.HTTP = []HTTPToolConfig{{Name: "t", Description: "d", URL: "http://x/",
				Approval: &ApprovalCardConfig{Title: "ok", Facts: []FactConfig{{Label: "L", Value: "{{end}}"}}}}}
		}, "tools.http[0].approval.facts[0].value: invalid template: "},
		{"web search provider", func(c *Config) { c.Tools.WebSearch = &WebSearchConfig{Provider: "google"} },
			"tools.web_search.provider: must be tavily, brave, searxng, ollama, mojeek or marginalia"},
		{"sandbox timeout", func(c *Config) { c.Tools.SandboxExec = &SandboxExecConfig{TimeoutSeconds: 5000} },
			"tools.sandbox_exec.timeout_seconds: must be between 1 and 1800"},
		{"mcp transport", func(c *Config) { c.MCPServers = []MCPServerConfig{{ID: "m"}} }, `mcp_servers[0].transport: must be stdio or http, got ""`},
		{"mcp id", func(c *Config) { c.MCPServers = []MCPServerConfig{{ID: "a__b", Command: "x"}} }, `mcp_servers[0].id: "a__b"`},
		{"mcp duplicate", func(c *Config) {
			c.MCPServers = []MCPServerConfig{{ID: "m", Command: "x"}, {ID: "m", URL: "http://127.0.0.1/mcp"}}
		}, `mcp_servers[1].id: duplicate "m"`},
		{"mcp approval", func(c *Config) { c.MCPServers = []MCPServerConfig{{ID: "m", Command: "x", Approval: "sometimes"}} },
			`mcp_servers[0].approval: must be always, never or annotations, got "sometimes"`},
		{"mcp protocol", func(c *Config) { c.MCPServers = []MCPServerConfig{{ID: "m", Command: "x", Protocol: "2024-11-05"}} },
			`mcp_servers[0].protocol: must be 2025-11-25 or 2026-07-28, got "2024-11-05"`},
		{"mcp tool approval", func(c *Config) {
			c.MCPServers = []MCPServerConfig{{ID: "m", Command: "x", Tools: map[string]MCPToolConfig{"write": {Approval: "yes"}}}}
		}, `mcp_servers[0].tools.write.approval: must be always, never or annotations, got "yes"`},
		{"slack token", func(c *Config) { c.Slack = &SlackConfig{SigningSecret: "s"} }, "slack.bot_token: required"},
		{"slack signing secret", func(c *Config) { c.Slack = &SlackConfig{BotToken: "b"} }, "slack.signing_secret: required"},
		{"slack agent", func(c *Config) { c.Slack = &SlackConfig{BotToken: "b", AppToken: "a", Agent: "x"} }, `slack.agent: "x" is not the name of an agent`},
		{"linear", func(c *Config) { c.Linear = &LinearConfig{WebhookSecret: "w"} }, "linear.access_token: required"},
		{"linear oauth secret", func(c *Config) {
			c.PublicURL = "https://brain.example.com"
			c.Linear = &LinearConfig{WebhookSecret: "w", ClientID: "id"}
		}, "linear.client_secret: required"},
		{"linear oauth public_url", func(c *Config) { c.Linear = &LinearConfig{WebhookSecret: "w", ClientID: "id", ClientSecret: "s"} },
			"public_url: required by linear.client_id"},
		{"linear token_url", func(c *Config) {
			c.PublicURL = "https://brain.example.com"
			c.Linear = &LinearConfig{WebhookSecret: "w", ClientID: "id", ClientSecret: "s", TokenURL: "ftp://x"}
		}, `linear.token_url: "ftp://x" is not an http or https URL`},
		{"linear review_state", func(c *Config) {
			c.Linear = &LinearConfig{WebhookSecret: "w", AccessToken: "a", ReviewState: " In Review"}
		}, `linear.review_state: " In Review" has spaces around it`},
		{"linear review_state two lines", func(c *Config) {
			c.Linear = &LinearConfig{WebhookSecret: "w", AccessToken: "a", ReviewState: "In\nReview"}
		}, "linear.review_state: is not a workflow state's name or id"},
		{"public_url plain http", func(c *Config) { c.PublicURL = "http://brain.example.com" }, "public_url: \"http://brain.example.com\": use https"},
		{"public_url relative", func(c *Config) { c.PublicURL = "/brain" }, "public_url: \"/brain\" is not an absolute URL"},
		{"public_url query", func(c *Config) { c.PublicURL = "https://b.example.com/?x=1" }, "want scheme, host and optional path only"},
		{"telemetry endpoint not a URL", func(c *Config) { c.Telemetry.OTLPEndpoint = "collector:4318" }, "telemetry.otlp_endpoint: \"collector:4318\" is not an http(s) URL"},
		{"telemetry endpoint grpc scheme", func(c *Config) { c.Telemetry.OTLPEndpoint = "grpc://c:4317" }, "telemetry.otlp_endpoint: \"grpc://c:4317\" is not an http(s) URL"},
		{"public_url scheme", func(c *Config) { c.PublicURL = "ftp://b.example.com" }, "is not an https URL"},
		{"approvals ttl", func(c *Config) { c.Approvals.TTL = Duration(-time.Hour) }, "approvals.ttl: must be a positive duration"},
		{"log level", func(c *Config) { c.Log.Level = "trace" }, `log.level: must be debug, info, warn or error, got "trace"`},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, "log.format: must be text or json"},
		{"synchronous", func(c *Config) { c.Storage.Synchronous = "off" }, "storage.synchronous: must be full or normal"},
		{"storage driver", func(c *Config) { c.Storage.Driver = "mysql" }, `storage.driver: must be sqlite or postgres, got "mysql"`},
		{"postgres without dsn", func(c *Config) { c.Storage = StorageConfig{Driver: DriverPostgres} }, "storage.dsn: required"},
		{"postgres with synchronous", func(c *Config) {
			c.Storage = StorageConfig{Driver: DriverPostgres, DSN: "postgres://db/brain", Synchronous: "full"}
		},
			"storage.synchronous: only for driver: sqlite"},
		{"sqlite with dsn", func(c *Config) { c.Storage.DSN = "postgres://db/brain" }, "storage.dsn: only for driver: postgres"},
		{"sqlite with lease_ttl", func(c *Config) { c.Storage.LeaseTTL = Duration(time.Minute) }, "storage.lease_ttl: only for driver: postgres"},
		{"outage_grace too short", func(c *Config) { c.Storage.OutageGrace = Duration(500 * time.Millisecond) }, "storage.outage_grace: must be at least 1s"},
		{"outage_grace too long", func(c *Config) { c.Storage.OutageGrace = Duration(2 * time.Hour) }, "storage.outage_grace: at most 1h"},
		{"retention duty above 1", func(c *Config) { c.Retention.Duty = 1.5 }, "retention.duty: between 0 and 1"},
		{"postgres short lease", func(c *Config) {
			c.Storage = StorageConfig{Driver: DriverPostgres, DSN: "postgres://db/brain", LeaseTTL: Duration(time.Millisecond), PollInterval: Duration(time.Millisecond)}
		}, "storage.lease_ttl: must be at least 1s"},
		{"postgres poll past lease", func(c *Config) {
			c.Storage = StorageConfig{Driver: DriverPostgres, DSN: "postgres://db/brain", LeaseTTL: Duration(time.Second), PollInterval: Duration(time.Minute)}
		}, "storage.poll_interval: must not be longer than storage.lease_ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.mutate(c)
			c.ApplyDefaults()
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %q, want it to contain %q", err, tt.want)
			}
		})
	}

	t.Run("public_url and linear oauth", func(t *testing.T) {
		for _, u := range []string{"https://brain.example.com/", "https://brain.example.com/sub", "http://127.0.0.1:8080", "http://localhost:8080"} {
			c := validConfig()
			c.PublicURL = u
			c.Linear = &LinearConfig{WebhookSecret: "w", ClientID: "id", ClientSecret: "s"}
			c.ApplyDefaults()
			if err := c.Validate(); err != nil {
				t.Errorf("public_url %q: %v", u, err)
			}
			if strings.HasSuffix(c.PublicURL, "/") {
				t.Errorf("public_url %q kept its trailing slash", c.PublicURL)
			}
			l := c.Linear
			if l.AuthorizeURL != DefaultLinearAuthorizeURL || l.TokenURL != DefaultLinearTokenURL || !l.MovesToStarted() {
				t.Errorf("linear defaults = %q %q %v", l.AuthorizeURL, l.TokenURL, l.MovesToStarted())
			}
		}
	})

	t.Run("valid", func(t *testing.T) {
		c := validConfig()
		c.ApplyDefaults()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLoad_AllProblemsAtOnce(t *testing.T) {
	_, err := loadYAML(t, `
listen: 0.0.0.0:1
models:
  default: {provider: gpt, model: m}
agents:
  - {name: default, model: big}
limits: {max_running_turns: -1}
slack: {signing_secret: "${SLACK_SIGNING_SECRET}", bot_token: "${SLACK_BOT_TOKEN}"}
`, nil)
	if err == nil {
		t.Fatal("Load accepted an invalid config")
	}
	for _, want := range []string{
		"config.yaml:\n",
		"listen: 0.0.0.0:1 is not a loopback address",
		"models.default.provider: must be",
		`agents[0].model: "big" is not a key of models`,
		"limits.max_running_turns: must be >= 1",
		"slack.bot_token: required, but the environment variable SLACK_BOT_TOKEN is not set",
		"slack.signing_secret: required, but the environment variable SLACK_SIGNING_SECRET is not set",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestValidate_Listen(t *testing.T) {
	tests := []struct {
		listen  string
		apiKeys []APIKey
		ok      bool
	}{
		{"127.0.0.1:8080", nil, true},
		{"127.0.0.2:0", nil, true},
		{"[::1]:8080", nil, true},
		{"localhost:8080", nil, true},
		{"LOCALHOST:8080", nil, true},
		{"[::ffff:127.0.0.1]:8080", nil, true},
		{"0.0.0.0:8080", nil, false},
		{":8080", nil, false},
		{"[::]:8080", nil, false},
		{"10.0.0.1:8080", nil, false},
		{"brain.internal:8080", nil, false},
		{"0.0.0.0:8080", []APIKey{{Key: "0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"}}, true},
		{":8080", []APIKey{{Key: "0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.listen, func(t *testing.T) {
			c := validConfig()
			c.Listen, c.APIKeys = tt.listen, tt.apiKeys
			c.ApplyDefaults()
			err := c.Validate()
			if tt.ok && err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), "listen: "+tt.listen+" is not a loopback address")) {
				t.Errorf("Validate() = %v, want a loopback error", err)
			}
		})
	}
}

func TestValidate_GitHub(t *testing.T) {
	app := &GitHubAppConfig{AppID: 1, PrivateKeyFile: "/etc/brain/gh.pem", InstallationID: 2}
	tests := []struct {
		name string
		gh   GitHubConfig
		want []string // empty: valid
	}{
		{"token", GitHubConfig{Token: "t0ken", Repos: []string{"acme/widgets", "acme/*", "acme/web-?"}}, nil},
		{"app", GitHubConfig{App: app, BaseURL: "https://ghe.example/api/v3", Repos: []string{"acme/widgets"}}, nil},
		{"neither", GitHubConfig{Repos: []string{"acme/widgets"}}, []string{"tools.github.token: required (or set tools.github.app)"}},
		{"both", GitHubConfig{Token: "t0ken", App: app, Repos: []string{"acme/widgets"}}, []string{"tools.github.token: set token or app, not both"}},
		{"app keys", GitHubConfig{App: &GitHubAppConfig{}, Repos: []string{"acme/widgets"}}, []string{
			"tools.github.app.app_id: must be >= 1",
			"tools.github.app.installation_id: must be >= 1",
			"tools.github.app.private_key_file: required",
		}},
		{"base url", GitHubConfig{Token: "t0ken", BaseURL: "ghe.example", Repos: []string{"acme/widgets"}}, []string{`tools.github.base_url: "ghe.example" is not an http or https URL`}},
		{"no repos", GitHubConfig{Token: "t0ken"}, []string{"tools.github.repos: list at least one repository"}},
		{"bad repos", GitHubConfig{Token: "t0ken", Repos: []string{"widgets", "*/widgets", "acme/[", "acme/a/b"}}, []string{
			`tools.github.repos[0]: "widgets": want owner/name`,
			`tools.github.repos[1]: "*/widgets": want owner/name, the owner literal`,
			`tools.github.repos[2]: "acme/[": invalid glob`,
			`tools.github.repos[3]: "acme/a/b": want owner/name`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			gh := tt.gh
			c.Tools.GitHub = &gh
			c.ApplyDefaults()
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestValidate_ApproverGroups(t *testing.T) {
	c := validConfig()
	c.Approvals.Approvers = []string{"U1", "subteam:S1", "team:X", "subteam:"}
	err := c.Validate()
	for _, want := range []string{
		`approvals.approvers[1]: "subteam:S1" names a Slack user group, but slack is not configured`,
		`approvals.approvers[2]: "team:X": an entry with a colon is subteam:<Slack user group id> or person:<person id>`,
		`approvals.approvers[3]`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
