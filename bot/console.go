package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"brain/bot/config"
	"brain/bot/web"
	"brain/engine"
)

// newConsole builds the web console from the config; nil when
// console.disabled.
func (a *App) newConsole(clock func() time.Time, mcps *mcpCatalog) (*web.Server, error) {
	cfg := a.cfg
	if cfg.Console.Disabled {
		return nil, nil
	}
	agents := make([]string, 0, len(cfg.Agents))
	for _, ag := range cfg.Agents {
		agents = append(agents, ag.Name)
	}
	// Successes are trusted for a while, as /readyz does, so viewing the
	// status page does not turn into a stream of calls to the platforms.
	status := consoleStatus{cfg: cfg, mcps: mcps}
	var origins []web.Origin
	for _, p := range a.platforms {
		status.platforms = append(status.platforms, platformStatus{p, cacheSuccess(clock, remoteReadyTTL, p.Ready)})
		origins = append(origins, web.Origin{Name: p.Name(), Link: p.SessionLink})
	}
	wc := web.Config{
		Engine: consoleEngine{a.engine}, Schedules: a.schedules, Logger: a.log.With("component", "console"),
		Status:       status,
		Origins:      origins,
		APIKeys:      cfg.APIKeys,
		Keys:         a.keys,
		Admins:       cfg.Console.Admins,
		SessionTTL:   cfg.Console.SessionTTL.Std(),
		PublicURL:    cfg.PublicURL,
		DefaultAgent: cfg.Agents[0].Name,
		Agents:       agents,
		Clock:        clock,
		WriteTimeout: cfg.Limits.WriteTimeout.Std(),
		Done:         a.done,
		Search:       a.store,
		Usage:        a.store,
		Prices:       agentPrices(cfg),
		Audit:        a.audit,
		Memory:       a.store,
		Budgets:      a.budgetsPage(),
		Connections:  consoleConnections{a.store, a.connect},
	}
	if len(cfg.Skills.Sources) > 0 {
		// The catalog is loaded after the console is built, before
		// anything is served.
		wc.Skills = func() []web.Skill { return consoleSkills(cfg, a.skills, a.skillUses) }
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

// consoleStatus is what the console's status page shows of the platforms
// and the MCP servers.
type consoleStatus struct {
	cfg       *config.Config
	platforms []platformStatus
	mcps      *mcpCatalog
}

// platformStatus is a platform with its cached readiness check.
type platformStatus struct {
	Platform
	ready func(context.Context) error
}

func (c consoleStatus) StatusSections(ctx context.Context) []web.Section {
	var out []web.Section
	for _, p := range c.platforms {
		out = append(out, p.Status(ctx, p.ready))
	}
	if c.mcps != nil {
		out = append(out, c.mcpSection())
	}
	return out
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
func (a *App) mountConsole(clock func() time.Time, mcps *mcpCatalog) error {
	c, err := a.newConsole(clock, mcps)
	if err != nil || c == nil {
		return err
	}
	for _, p := range web.Patterns {
		a.api.Mount(p, c.Handler())
	}
	return nil
}
