package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate reports every problem at once (errors.Join), each prefixed with the
// key path, e.g. `agents[0].model: "big" is not a key of models`. It compiles
// the agents' when.input_matches. Call ApplyDefaults first.
func (c *Config) Validate() error {
	var p problems
	p.unsetAt = c.unsetAt
	p.bad = c.badKeys

	c.validateListen(&p)
	c.validatePublicURL(&p)
	c.validateTelemetry(&p)
	if c.DataDir == "" {
		p.add("data_dir", "required")
	}
	c.validateAPIKeys(&p)
	oneOf(&p, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf(&p, "log.format", c.Log.Format, "text", "json")
	c.validateStorage(&p)
	c.validateSecrets(&p)
	c.validateModels(&p)
	c.validateAgents(&p)
	c.validateChannels(&p)
	c.validateSchedules(&p)
	c.validateTools(&p)
	c.validateSkills(&p)
	c.validateMCP(&p)
	c.validateConsole(&p)
	c.validateGovernance(&p)

	c.validateApprovals(&p)
	for i, a := range c.Approvals.Approvers {
		c.checkApproverGroup(&p, fmt.Sprintf("approvals.approvers[%d]", i), a)
	}
	for i, ag := range c.Agents {
		for j, a := range ag.Approvers {
			c.checkApproverGroup(&p, fmt.Sprintf("agents[%d].approvers[%d]", i, j), a)
		}
	}
	l := c.Limits
	atLeast(&p, "limits.max_running_turns", int64(l.MaxRunningTurns), 1, "")
	atLeast(&p, "limits.max_queued_turns", int64(l.MaxQueuedTurns), 1, "")
	atLeast(&p, "limits.max_tool_iterations", int64(l.MaxToolIterations), 1, "")
	atLeast(&p, "limits.max_output_bytes", int64(l.MaxOutputBytes), 1, "")
	atLeast(&p, "limits.max_parallel_tools", int64(l.MaxParallelTools), 1, "")
	atLeast(&p, "limits.tool_timeout", int64(l.ToolTimeout), 1, "a positive duration")
	atLeast(&p, "limits.elicitation_timeout", int64(l.ElicitationTimeout), 1, "a positive duration")
	atLeast(&p, "limits.max_body_bytes", l.MaxBodyBytes, 1, "")
	atLeast(&p, "limits.max_connections", int64(l.MaxConnections), 1, "")
	atLeast(&p, "limits.max_pending_per_client", int64(l.MaxPendingPerClient), 1, "")
	atLeast(&p, "limits.read_timeout", int64(l.ReadTimeout), 1, "a positive duration")
	atLeast(&p, "limits.write_timeout", int64(l.WriteTimeout), 1, "a positive duration")
	atLeast(&p, "limits.idle_timeout", int64(l.IdleTimeout), 1, "a positive duration")
	return errors.Join(p.errs...)
}

// validateStorage checks the storage block: each driver takes its own keys.
func (c *Config) validateStorage(p *problems) {
	s := c.Storage
	atLeast(p, "storage.outage_grace", int64(s.OutageGrace), int64(time.Second), "at least 1s")
	if s.OutageGrace > Duration(time.Hour) {
		p.add("storage.outage_grace", "at most 1h: a turn waits this long for the database")
	}
	switch s.Driver {
	case DriverSQLite:
		oneOf(p, "storage.synchronous", s.Synchronous, "full", "normal")
		if s.DSN != "" {
			p.add("storage.dsn", "only for driver: postgres (SQLite lives in data_dir)")
		}
		if s.LeaseTTL != 0 {
			p.add("storage.lease_ttl", "only for driver: postgres (one process owns an SQLite file)")
		}
		if s.PollInterval != 0 {
			p.add("storage.poll_interval", "only for driver: postgres (one process owns an SQLite file)")
		}
	case DriverPostgres:
		p.required("storage.dsn", s.DSN)
		if s.Synchronous != "" {
			p.add("storage.synchronous", "only for driver: sqlite (PostgreSQL's durability is its own synchronous_commit)")
		}
		atLeast(p, "storage.lease_ttl", int64(s.LeaseTTL), int64(time.Second), "at least 1s")
		atLeast(p, "storage.poll_interval", int64(s.PollInterval), int64(10*time.Millisecond), "at least 10ms")
		if s.PollInterval > s.LeaseTTL {
			p.add("storage.poll_interval", "must not be longer than storage.lease_ttl")
		}
	default:
		oneOf(p, "storage.driver", s.Driver, DriverSQLite, DriverPostgres)
	}
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

// validatePublicURL wants an absolute https URL, or http on a loopback
// host (a local test): OAuth codes and links travel through it.
func (c *Config) validatePublicURL(p *problems) {
	if c.PublicURL == "" {
		return
	}
	u, err := url.Parse(c.PublicURL)
	switch {
	case err != nil || u.Host == "" || !u.IsAbs():
		p.add("public_url", "%q is not an absolute URL", c.PublicURL)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		p.add("public_url", "%q: want scheme, host and optional path only", c.PublicURL)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	case u.Scheme == "http":
		p.add("public_url", "%q: use https (plain http only on a loopback host)", c.PublicURL)
	default:
		p.add("public_url", "%q is not an https URL", c.PublicURL)
	}
}

// validateTelemetry wants the OTLP endpoint as an absolute http(s) URL.
func (c *Config) validateTelemetry(p *problems) {
	if e := c.Telemetry.OTLPEndpoint; e != "" {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			p.add("telemetry.otlp_endpoint", "%q is not an http(s) URL", e)
		}
	}
	if c.Telemetry.ServiceName == "" {
		p.add("telemetry.service_name", "must not be empty")
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
		validateFake(p, key, m)
		atLeast(p, key+".max_tokens", int64(m.MaxTokens), 1, "")
		if m.ContextWindow <= m.MaxTokens {
			p.add(key+".context_window", "must be larger than max_tokens (%d), the part kept for the answer; got %d", m.MaxTokens, m.ContextWindow)
		}
		validatePrice(p, key+".price", m.Price)
		atLeast(p, key+".timeout", int64(m.Timeout), 1, "a positive duration")
		if m.MaxRetries != nil && *m.MaxRetries < 0 {
			p.add(key+".max_retries", "must be >= 0")
		}
	}
}

// validatePrice refuses negative prices.
func validatePrice(p *problems, key string, pr *PriceConfig) {
	if pr == nil {
		return
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"input", &pr.Input}, {"cache_read", pr.CachedRead}, {"cache_write", pr.CacheWrite}, {"output", &pr.Output}} {
		if f.v != nil && *f.v < 0 {
			p.add(key+"."+f.name, "must be >= 0 (US dollars per million tokens)")
		}
	}
}

// validateFake checks the keys only the fake model server (test double)
// reads: they are refused on a real provider rather than ignored.
func validateFake(p *problems, key string, m ModelConfig) {
	if m.Provider != "fake" {
		if m.Script != "" {
			p.add(key+".script", "only for provider fake")
		}
		if m.Listen != "" {
			p.add(key+".listen", "only for provider fake")
		}
		return
	}
	if m.Script != "" {
		oneOf(p, key+".script", m.Script, "echo", "demo")
	}
	if m.Listen == "" {
		return
	}
	host, port, err := net.SplitHostPort(m.Listen)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		p.add(key+".listen", "want a loopback host:port, got %q", m.Listen)
	} else if !isLoopbackHost(host) {
		p.add(key+".listen", "%s is not a loopback address", m.Listen)
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
		if n := len(a.Slack.SuggestedPrompts); n > MaxSuggestedPrompts {
			p.add(key+".slack.suggested_prompts", "%d prompts; Slack shows at most %d", n, MaxSuggestedPrompts)
		}
		for j, pr := range a.Slack.SuggestedPrompts {
			if n := utf8.RuneCountInString(strings.TrimSpace(pr)); n == 0 || n > MaxPromptLength {
				p.add(fmt.Sprintf("%s.slack.suggested_prompts[%d]", key, j), "must be 1..%d characters", MaxPromptLength)
			}
		}
		for j := range a.When {
			w, wkey := &a.When[j], fmt.Sprintf("%s.when[%d]", key, j)
			if w.InputMatches == "" {
				p.add(wkey+".input_matches", "required")
			} else if re, err := regexp.Compile(w.InputMatches); err != nil {
				p.add(wkey+".input_matches", "invalid regexp: %v", err)
			} else {
				w.re = re
			}
			if len(w.Tools) == 0 && len(w.Skills) == 0 {
				p.add(wkey+".tools", "required (or skills)")
			}
			checkToolNames(p, wkey+".tools", w.Tools)
		}
		if a.ResultTool != "" && !namePattern.MatchString(a.ResultTool) {
			p.add(key+".result_tool", "%q is not a valid tool name", a.ResultTool)
		}
		atLeast(p, key+".max_tool_iterations", int64(a.MaxToolIterations), 1, "")
		oneOf(p, key+".input_mode", a.InputMode, "queue", "interrupt")
		a.Memory.validate(p, key+".memory")
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
		atLeast(p, "slack.thread_context.max_messages", int64(s.ThreadContext.MaxMessages), -1, "-1 (off) or more")
		atLeast(p, "slack.thread_context.max_chars", int64(s.ThreadContext.MaxChars), 1, "")
		atLeast(p, "slack.files.max_file_bytes", s.Files.MaxFileBytes, 1, "")
		atLeast(p, "slack.files.max_turn_bytes", s.Files.MaxTurnBytes, s.Files.MaxFileBytes, "at least slack.files.max_file_bytes")
		atLeast(p, "slack.files.max_text_chars", int64(s.Files.MaxTextChars), 1, "")
		atLeast(p, "slack.files.store_bytes", s.Files.StoreBytes, s.Files.MaxTurnBytes, "at least slack.files.max_turn_bytes")
	}
	if l := c.Linear; l != nil {
		p.required("linear.webhook_secret", l.WebhookSecret)
		if l.OAuth() {
			p.required("linear.client_secret", l.ClientSecret)
			if c.PublicURL == "" {
				p.add("public_url", "required by linear.client_id (the OAuth redirect URI is public_url + /linear/oauth/callback)")
			}
		} else if l.AccessToken == "" {
			p.add("linear.access_token", "required, or set linear.client_id to install the app with OAuth")
		}
		checkURL(p, "linear.api_url", l.APIURL, false)
		checkURL(p, "linear.authorize_url", l.AuthorizeURL, false)
		checkURL(p, "linear.token_url", l.TokenURL, false)
		c.checkAgent(p, "linear.agent", l.Agent)
		checkStateName(p, "linear.review_state", l.ReviewState)
	}
	if g := c.GitHub; g != nil {
		p.required("github.webhook_secret", g.WebhookSecret)
		switch {
		case g.Token != "" && g.App != nil:
			p.add("github.token", "set token or app, not both")
		case g.App == nil:
			p.required("github.token", g.Token)
		default:
			atLeast(p, "github.app.app_id", g.App.AppID, 1, "")
			atLeast(p, "github.app.installation_id", g.App.InstallationID, 1, "")
			p.required("github.app.private_key_file", g.App.PrivateKeyFile)
		}
		p.required("github.login", g.Login)
		checkURL(p, "github.base_url", g.BaseURL, false)
		c.checkAgent(p, "github.agent", g.Agent)
		for i, r := range g.Repos {
			key := fmt.Sprintf("github.repos[%d].repo", i)
			owner, name, ok := strings.Cut(r.Repo, "/")
			_, err1 := path.Match(owner, "")
			_, err2 := path.Match(name, "")
			if !ok || owner == "" || name == "" || strings.Contains(name, "/") || err1 != nil || err2 != nil {
				p.add(key, "%q is not owner/name (either may be a glob)", r.Repo)
			}
		}
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
		if g := s.PostTo.GitHubIssue; g != "" {
			if c.GitHub == nil {
				p.add(key+".post_to.github_issue", "needs the github block")
			}
			repo, num, ok := strings.Cut(g, "#")
			if n, err := strconv.Atoi(num); !ok || err != nil || n <= 0 || strings.Count(repo, "/") != 1 {
				p.add(key+".post_to.github_issue", "%q is not owner/repo#number", g)
			}
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
	bad     map[string]bool // keys with a type error: already reported
}

func (p *problems) add(key, format string, args ...any) {
	if underBad(p.bad, key) {
		return
	}
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

// Unsupported lists configured keys that Validate accepts but this build
// does not act on yet, so a user is told instead of silently ignored. This
// build acts on every key it accepts.
func (c *Config) Unsupported() []string {
	return nil
}

// checkApproverGroup checks an approvers entry that names a group or a
// person: only Slack user groups (subteam:S0123) exist, and they need the
// slack block; person:ID names a person of /v1/people (linked identities
// on every surface).
func (c *Config) checkApproverGroup(p *problems, key, entry string) {
	kind, id, ok := strings.Cut(entry, ":")
	switch {
	case !ok:
	case kind == "person" && id != "":
	case kind != "subteam" || id == "":
		p.add(key, "%q: an entry with a colon is subteam:<Slack user group id> or person:<person id>, e.g. subteam:S0123", entry)
	case c.Slack == nil:
		p.add(key, "%q names a Slack user group, but slack is not configured", entry)
	}
}
