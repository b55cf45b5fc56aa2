package bot

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"brain/bot/config"
	"brain/bot/telemetry"
	"brain/internal/startstop"
	"brain/tools"
	"brain/tools/mcp"
)

// mcpCatalog keeps the MCP bridge's tools compiled, rebuilt whenever a
// server's tool list changes, so each turn offers the current tools. Start
// connects the servers (a server that fails is logged and skipped); Stop
// disconnects them and stops stdio children.
type mcpCatalog struct {
	servers []mcp.ServerConfig
	log     *slog.Logger
	ids     map[string]bool
	life    startstop.Lifecycle
	// wrap, when set, wraps each tool (connect links, mcpperson.go).
	wrap func(tools.Definition) tools.Definition

	mu     sync.RWMutex
	bridge *mcp.Bridge
	tools  []*tools.Tool
}

// newMCPCatalog prepares the catalog of cfg's servers; it connects nothing.
// oauth is the OAuth of a server with auth: oauth (mcpauth.go).
func newMCPCatalog(cfg *config.Config, log *slog.Logger, oauth func(id string) *mcp.OAuth) *mcpCatalog {
	servers := make([]mcp.ServerConfig, 0, len(cfg.MCPServers))
	ids := map[string]bool{}
	for _, s := range cfg.MCPServers {
		ids[s.ID] = true
		perTool := map[string]string{}
		for name, t := range s.Tools {
			perTool[name] = t.Approval
		}
		servers = append(servers, mcp.ServerConfig{
			ID: s.ID, Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env,
			Cwd: s.Cwd, URL: s.URL, BearerToken: s.BearerToken,
			Approval: s.Approval, ToolApproval: perTool, Protocol: s.Protocol, OAuth: oauth(s.ID),
		})
	}
	return &mcpCatalog{servers: servers, log: log, ids: ids}
}

// Start connects every server, waiting at most each server's connect
// timeout, and compiles their tools.
func (c *mcpCatalog) Start(ctx context.Context) error {
	return c.life.Start(ctx, func(ctx context.Context) error {
		b := mcp.Connect(ctx, c.servers, c.log.With(tools.LogComponent, "mcp"))
		c.mu.Lock()
		c.bridge = b
		c.mu.Unlock()
		c.refresh()
		b.OnChange(c.refresh)
		return nil
	})
}

// Stop disconnects every server and stops stdio children. Safe before
// Start, twice and concurrently.
func (c *mcpCatalog) Stop(ctx context.Context) error {
	return c.life.Stop(ctx, func() {
		c.mu.RLock()
		b := c.bridge
		c.mu.RUnlock()
		if b != nil {
			if err := b.Close(); err != nil {
				c.log.Warn("mcp servers did not all stop cleanly", tools.LogErr, err)
			}
		}
	})
}

func (c *mcpCatalog) refresh() {
	c.mu.RLock()
	b := c.bridge
	c.mu.RUnlock()
	var out []*tools.Tool
	for _, d := range b.Tools() {
		if c.wrap != nil {
			d = c.wrap(d)
		}
		t, err := tools.Compile(d)
		if err != nil {
			c.log.Warn("mcp tool skipped", tools.LogTool, d.Name, tools.LogErr, err)
			continue
		}
		out = append(out, t)
	}
	c.mu.Lock()
	c.tools = out
	c.mu.Unlock()
	c.log.Info("mcp tools available", tools.LogCount, len(out))
}

// describe is the telemetry.MCPDescriber of the catalog's tools.
func (c *mcpCatalog) describe(tool string) (server, method, protocol string, ok bool) {
	c.mu.RLock()
	b := c.bridge
	c.mu.RUnlock()
	if b == nil {
		return "", "", "", false
	}
	info, ok := b.Describe(tool)
	return info.Server, info.Method, info.Protocol, ok
}

// reconnect asks the bridge to connect a server again (it was just
// connected to an account).
func (c *mcpCatalog) reconnect(id string) {
	c.mu.RLock()
	b := c.bridge
	c.mu.RUnlock()
	if b != nil {
		b.Reconnect(id)
	}
}

// owns reports whether an agent's tool entry refers to MCP: a server id
// (all of its tools) or "<id>__<tool>".
func (c *mcpCatalog) owns(name string) bool {
	if c == nil {
		return false
	}
	id, _, _ := strings.Cut(name, "__")
	return c.ids[id]
}

// selector returns the current MCP tools an agent's entries name.
func (c *mcpCatalog) selector(entries []string) func() []*tools.Tool {
	return func() []*tools.Tool {
		c.mu.RLock()
		defer c.mu.RUnlock()
		var out []*tools.Tool
		for _, t := range c.tools {
			for _, e := range entries {
				if t.Name == e || strings.HasPrefix(t.Name, e+"__") && c.ids[e] {
					out = append(out, t)
					break
				}
			}
		}
		return out
	}
}

// registerMetrics exports each server's tools/call counts.
func (c *mcpCatalog) registerMetrics(reg *telemetry.Registry) {
	samples := func(pick func(mcp.ServerStats) int64) func() []telemetry.Sample {
		return func() []telemetry.Sample {
			c.mu.RLock()
			b := c.bridge
			c.mu.RUnlock()
			if b == nil {
				return nil
			}
			var out []telemetry.Sample
			for _, st := range b.Stats() {
				out = append(out, telemetry.Sample{Labels: []string{st.ID}, Value: float64(pick(st))})
			}
			return out
		}
	}
	reg.CounterFunc("brain_mcp_calls_total", "MCP tools/call requests, by server.", []string{"server"},
		samples(func(st mcp.ServerStats) int64 { return st.Calls }))
	reg.CounterFunc("brain_mcp_call_errors_total", "MCP tools/call requests that did not succeed, by server.", []string{"server"},
		samples(func(st mcp.ServerStats) int64 { return st.Errors }))
	reg.CounterFunc("brain_mcp_elicitations_total", "MCP servers' requests for a person's input during a call, by server.", []string{"server"},
		samples(func(st mcp.ServerStats) int64 { return st.Elicitations }))
}
