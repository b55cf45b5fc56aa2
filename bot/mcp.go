package bot

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"brain/bot/config"
	"brain/tools"
	"brain/tools/mcp"
)

// mcpCatalog keeps the MCP bridge's tools compiled, rebuilt whenever a
// server's tool list changes, so each turn offers the current tools.
type mcpCatalog struct {
	bridge *mcp.Bridge
	log    *slog.Logger
	ids    map[string]bool

	mu    sync.RWMutex
	tools []*tools.Tool
}

func newMCPCatalog(ctx context.Context, cfg *config.Config, log *slog.Logger) *mcpCatalog {
	servers := make([]mcp.ServerConfig, 0, len(cfg.MCPServers))
	ids := map[string]bool{}
	for _, s := range cfg.MCPServers {
		ids[s.ID] = true
		servers = append(servers, mcp.ServerConfig{
			ID: s.ID, Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env,
			Cwd: s.Cwd, URL: s.URL, BearerToken: s.BearerToken,
		})
	}
	c := &mcpCatalog{bridge: mcp.Connect(ctx, servers, log.With(tools.LogComponent, "mcp")), log: log, ids: ids}
	c.refresh()
	c.bridge.OnChange(c.refresh)
	return c
}

func (c *mcpCatalog) refresh() {
	var out []*tools.Tool
	for _, d := range c.bridge.Tools() {
		t, err := tools.Compile(d)
		if err != nil {
			c.log.Warn("mcp tool skipped", "tool", d.Name, logErr, err)
			continue
		}
		out = append(out, t)
	}
	c.mu.Lock()
	c.tools = out
	c.mu.Unlock()
	c.log.Info("mcp tools available", "count", len(out))
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

// Close disconnects every server and stops stdio children.
func (c *mcpCatalog) Close() error { return c.bridge.Close() }
