package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"brain/bot/config"
	"brain/bot/web"
	slackchan "brain/channels/slack"
	"brain/engine"
	"brain/engine/durable"
)

// newConsole builds the web console from the config; nil when
// console.disabled.
func (a *App) newConsole(clock func() time.Time, remote map[string]readier, mcps *mcpCatalog) (*web.Server, error) {
	cfg := a.cfg
	if cfg.Console.Disabled {
		return nil, nil
	}
	agents := make([]string, 0, len(cfg.Agents))
	for _, ag := range cfg.Agents {
		agents = append(agents, ag.Name)
	}
	// Successes are trusted for a while, as /readyz does, so viewing the
	// status page does not turn into a stream of calls to Slack or Linear.
	checks := map[string]func(context.Context) error{}
	for name, r := range remote {
		checks[name] = cacheSuccess(clock, remoteReadyTTL, r.Ready)
	}
	wc := web.Config{
		Engine: consoleEngine{a.engine}, Schedules: a.schedules, Logger: a.log.With("component", "console"),
		Status:       consoleStatus{cfg: cfg, store: a.store, ready: checks, mcps: mcps, now: clock},
		APIKeys:      cfg.APIKeys,
		Admins:       cfg.Console.Admins,
		SessionTTL:   cfg.Console.SessionTTL.Std(),
		PublicURL:    cfg.PublicURL,
		DefaultAgent: cfg.Agents[0].Name,
		Agents:       agents,
		Clock:        clock,
		WriteTimeout: cfg.Limits.WriteTimeout.Std(),
		Done:         a.done,
	}
	if s := cfg.Console.SlackSignIn; s != nil {
		wc.SlackSignIn = &web.SlackSignIn{ClientID: s.ClientID, ClientSecret: s.ClientSecret, TeamID: s.TeamID,
			AuthorizeURL: s.AuthorizeURL, RedirectURL: cfg.PublicURL + web.SlackCallbackPath}
		if cfg.Slack != nil {
			wc.SlackSignIn.APIURL = cfg.Slack.APIURL
		}
	}
	return web.New(wc)
}

// consoleEngine is the engine as the console asks for it: its delta feeds
// as the console's DeltaFeed.
type consoleEngine struct{ *engine.Engine }

func (e consoleEngine) Deltas(sessionID string) web.DeltaFeed { return e.WatchDeltas(sessionID) }

// consoleStatus is what the console's status page shows of Slack, Linear
// and the MCP servers.
type consoleStatus struct {
	cfg   *config.Config
	store durable.LinearTokens
	ready map[string]func(context.Context) error
	mcps  *mcpCatalog
	now   func() time.Time
}

func (c consoleStatus) StatusSections(ctx context.Context) []web.Section {
	var out []web.Section
	if sl := c.cfg.Slack; sl != nil {
		sec := web.Section{Title: "Slack", State: "ok"}
		mode := "Events API over HTTP (/slack/events)"
		if sl.AppToken != "" {
			mode = "Socket Mode"
		}
		sec.Rows = append(sec.Rows, web.Row{Label: "Mode", Value: mode}, c.connection(ctx, "slack", &sec))
		out = append(out, sec)
	}
	if c.cfg.Linear != nil {
		out = append(out, c.linear(ctx))
	}
	if c.mcps != nil {
		out = append(out, c.mcpSection())
	}
	return out
}

// connection is a readiness row: "connected", or the check's error.
func (c consoleStatus) connection(ctx context.Context, name string, sec *web.Section) web.Row {
	check, ok := c.ready[name]
	if !ok {
		return web.Row{Label: "Connection", Value: "not started"}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := check(ctx); err != nil {
		sec.State = "down"
		return web.Row{Label: "Connection", Value: err.Error()}
	}
	return web.Row{Label: "Connection", Value: "connected"}
}

func (c consoleStatus) linear(ctx context.Context) web.Section {
	sec := web.Section{Title: "Linear", State: "ok"}
	sec.Rows = append(sec.Rows, c.connection(ctx, "linear", &sec))
	if c.cfg.Linear.AccessToken != "" {
		sec.Rows = append(sec.Rows, web.Row{Label: "Static token", Value: "linear.access_token (never refreshed)"})
	}
	toks, err := c.store.LinearTokens(ctx)
	if err != nil {
		sec.State = "down"
		return sec
	}
	for _, t := range toks {
		state := t.Status
		if state == durable.LinearRevoked {
			sec.State = "warn"
			state += ": " + t.Problem
		}
		sec.Rows = append(sec.Rows, web.Row{Label: fmt.Sprintf("%s (%s)", t.OrganizationName, t.URLKey),
			Value: state + " · token expires " + expiry(t.ExpiresAt, c.now())})
	}
	if len(toks) == 0 && c.cfg.Linear.OAuth() {
		sec.Rows = append(sec.Rows, web.Row{Label: "Workspaces", Value: "none installed yet"})
	}
	return sec
}

func (c consoleStatus) mcpSection() web.Section {
	sec := web.Section{Title: "MCP servers", State: "ok"}
	c.mcps.mu.RLock()
	b := c.mcps.bridge
	var names []string
	for _, t := range c.mcps.tools {
		names = append(names, t.Name)
	}
	c.mcps.mu.RUnlock()
	var down []string
	if b == nil {
		sec.State = "warn"
	} else {
		down = b.Disconnected()
	}
	for _, s := range c.cfg.MCPServers {
		state := "connected"
		if b == nil {
			state = "starting"
		} else if slices.Contains(down, s.ID) {
			state, sec.State = "not connected (retried in the background)", "down"
		}
		var own []string
		for _, n := range names {
			if strings.HasPrefix(n, s.ID+"__") {
				own = append(own, n)
			}
		}
		sec.Rows = append(sec.Rows, web.Row{Label: s.ID, Value: fmt.Sprintf("%s · %d tools", state, len(own)), Items: own})
	}
	return sec
}

// mountConsole serves the web console at / beside the API.
func (a *App) mountConsole(clock func() time.Time, remote map[string]readier, mcps *mcpCatalog) error {
	c, err := a.newConsole(clock, remote, mcps)
	if err != nil || c == nil {
		return err
	}
	for _, p := range web.Patterns {
		a.api.Mount(p, c.Handler())
	}
	return nil
}

// consoleLinks make Slack cards and notices link to the console, when it
// is on and public_url says where it is.
func consoleLinks(cfg *config.Config) []slackchan.Option {
	if cfg.Console.Disabled || cfg.PublicURL == "" {
		return nil
	}
	return []slackchan.Option{slackchan.WithConsoleURL(cfg.PublicURL)}
}
