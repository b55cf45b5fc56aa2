package config

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestApplyDefaults(t *testing.T) {
	c := mustLoadYAML(t, minimalYAML+`
slack: {bot_token: b, signing_secret: s}
linear: {webhook_secret: w, access_token: a}
schedules: [{name: s, cron: "0 9 * * 1-5", prompt: p}]
tools:
  http: [{name: t, description: d, url: "https://x.example/"}]
  web_search: {provider: searxng}
  web_fetch: {}
  sandbox_exec: {}
mcp_servers: [{id: m, command: srv}, {id: n, url: "http://127.0.0.1/mcp"}]
`, nil)
	m := c.Models["default"]
	a := c.Agents[0]
	s := c.Schedules[0]
	h := c.Tools.HTTP[0]
	checks := []struct {
		key       string
		got, want any
	}{
		{"listen", c.Listen, "127.0.0.1:8080"},
		{"data_dir (under the config's directory)", filepath.Base(c.DataDir), "data"},
		{"models.default.max_tokens", m.MaxTokens, 4096},
		{"models.default.timeout", m.Timeout.Std(), 10 * time.Minute},
		{"models.default.max_retries", *m.MaxRetries, 2},
		{"agents[0].model", a.Model, "default"},
		{"agents[0].input_mode", a.InputMode, "queue"},
		{"agents[0].max_tool_iterations", a.MaxToolIterations, 5},
		{"limits.max_running_turns", c.Limits.MaxRunningTurns, 64},
		{"limits.max_queued_turns", c.Limits.MaxQueuedTurns, 256},
		{"limits.max_tool_iterations", c.Limits.MaxToolIterations, 5},
		{"limits.max_output_bytes", c.Limits.MaxOutputBytes, 65536},
		{"limits.tool_timeout", c.Limits.ToolTimeout.Std(), 60 * time.Second},
		{"limits.max_body_bytes", c.Limits.MaxBodyBytes, int64(1 << 20)},
		{"limits.max_connections", c.Limits.MaxConnections, 1024},
		{"limits.read_timeout", c.Limits.ReadTimeout.Std(), 30 * time.Second},
		{"limits.write_timeout", c.Limits.WriteTimeout.Std(), 60 * time.Second},
		{"limits.idle_timeout", c.Limits.IdleTimeout.Std(), 120 * time.Second},
		{"approvals.ttl", c.Approvals.TTL.Std(), 168 * time.Hour},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, "text"},
		{"storage.driver", c.Storage.Driver, "sqlite"},
		{"storage.synchronous", c.Storage.Synchronous, "full"},
		{"slack.agent", c.Slack.Agent, "default"},
		{"slack.reply_without_mention", *c.Slack.ReplyWithoutMention, true},
		{"linear.agent", c.Linear.Agent, "default"},
		{"schedules[0].timezone", s.Timezone, "UTC"},
		{"schedules[0].agent", s.Agent, "default"},
		{"schedules[0].overlap", s.Overlap, "skip"},
		{"schedules[0].enabled", *s.Enabled, true},
		{"tools.http[0].method", h.Method, "POST"},
		{"tools.http[0].timeout_ms", h.TimeoutMS, 60000},
		{"tools.web_search.max_results", c.Tools.WebSearch.MaxResults, 5},
		{"tools.web_search.timeout_ms", c.Tools.WebSearch.TimeoutMS, 10000},
		{"tools.web_fetch.max_chars", c.Tools.WebFetch.MaxChars, 4000},
		{"tools.web_fetch.max_body", c.Tools.WebFetch.MaxBody, int64(5 << 20)},
		{"tools.web_fetch.timeout_ms", c.Tools.WebFetch.TimeoutMS, 10000},
		{"tools.sandbox_exec.timeout_seconds", c.Tools.SandboxExec.TimeoutSeconds, 120},
		{"mcp_servers[0].transport", c.MCPServers[0].Transport, "stdio"},
		{"mcp_servers[1].transport", c.MCPServers[1].Transport, "http"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.key, ck.got, ck.want)
		}
	}

	again := *c
	again.ApplyDefaults()
	if !reflect.DeepEqual(&again, c) {
		t.Error("ApplyDefaults is not idempotent")
	}
	var zero Config
	if zero.Log.SlogLevel().String() != "INFO" || !(&SlackConfig{}).RepliesWithoutMention() ||
		!(&ScheduleConfig{}).IsEnabled() || (ModelConfig{}).Retries() != 2 {
		t.Error("accessors of unset keys do not return the defaults")
	}
}

func TestApplyDefaults_AgentApprovers(t *testing.T) {
	c := validConfig()
	c.Approvals.Approvers = []string{"U1"}
	c.Agents = append(c.Agents, AgentConfig{Name: "own", Approvers: []string{"U2"}})
	c.ApplyDefaults()
	if got := c.Agents[0].Approvers; !slices.Equal(got, []string{"U1"}) {
		t.Errorf("agents[0].approvers = %q, want approvals.approvers", got)
	}
	if got := c.Agents[1].Approvers; !slices.Equal(got, []string{"U2"}) {
		t.Errorf("agents[1].approvers = %q, want its own", got)
	}
}
