package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"brain/tools"
)

// maxName is the longest tool name the tool contract accepts.
const maxName = 128

// reconnectGap is how long after a failed connect a lost connection
// noticed by a call waits for the next attempt; the refresh timer retries
// regardless.
const reconnectGap = 10 * time.Second

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate reports the first problem with the config. Messages name
// fields and env variables, never their values.
func (c ServerConfig) Validate() error {
	if !validID.MatchString(c.ID) {
		return errors.New("id must be 1 to 64 letters, digits, '_' or '-'")
	}
	switch c.Transport {
	case TransportStdio:
		if c.Command == "" {
			return errors.New("a stdio server needs a command")
		}
		if c.URL != "" || c.BearerToken != "" || c.OAuth != nil {
			return errors.New("a stdio server takes no url, bearer token or oauth")
		}
		for k, v := range c.Env {
			// Messages name the variable, never its value.
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
				return fmt.Errorf("env variable %q: the name is empty or holds '=' or NUL, or the value holds NUL", k)
			}
		}
	case TransportHTTP:
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL is not quoted: its query may hold a key.
			return errors.New("an http server needs an absolute http or https url")
		}
		if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 || c.Cwd != "" {
			return errors.New("an http server takes no command, args, env or cwd")
		}
		if c.OAuth != nil && c.BearerToken != "" {
			return errors.New("a server takes oauth or a bearer token, not both")
		}
		if c.OAuth != nil {
			if err := c.OAuth.validate(); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("transport must be %q or %q, not %q", TransportStdio, TransportHTTP, c.Transport)
	}
	if c.Protocol != "" && c.Protocol != ProtocolLegacy && c.Protocol != ProtocolStateless {
		return fmt.Errorf("protocol must be %q or %q, not %q", ProtocolLegacy, ProtocolStateless, c.Protocol)
	}
	if !validApproval(c.Approval) {
		return fmt.Errorf("approval must be %q, %q or %q, not %q", ApprovalAlways, ApprovalNever, ApprovalAnnotations, c.Approval)
	}
	for tool, mode := range c.ToolApproval {
		if !validApproval(mode) {
			return fmt.Errorf("tool %q: approval must be %q, %q or %q, not %q", tool, ApprovalAlways, ApprovalNever, ApprovalAnnotations, mode)
		}
	}
	return nil
}

// server is one configured server: its connection, when there is one, and
// the catalog built from it.
type server struct {
	b     *Bridge
	cfg   ServerConfig
	log   *slog.Logger // scrubs secrets
	scrub *tools.Scrubber
	kick  chan struct{} // re-list (or reconnect) soon; never blocks
	stats counters

	mu      sync.Mutex
	conn    *conn
	defs    []tools.Definition
	closed  bool
	retryAt time.Time         // after a failed connect, no reconnect on a kick before this; one goroutine at a time
	forced  atomic.Bool       // the next kick reconnects even before retryAt (Bridge.Reconnect)
	dropped map[string]string // tool -> why it is not offered, logged once
	headers sync.Map          // the server's tool name -> map[property]x-mcp-header, for Mcp-Param-*
	legacy  atomic.Bool       // negotiation found 2025-11-25: asked for directly until restart (negotiate.go)

	// people are the MCP sessions of a per-person server, one per
	// person (person.go).
	pmu    sync.Mutex
	people map[string]*conn
}

// dropOnce logs, the first time for this reason, that a tool is not offered.
func (s *server) dropOnce(tool, why string) {
	s.mu.Lock()
	if s.dropped == nil {
		s.dropped = map[string]string{}
	}
	seen := s.dropped[tool] == why
	s.dropped[tool] = why
	s.mu.Unlock()
	if !seen {
		s.log.Warn("mcp tool skipped: invalid x-mcp-header", tools.LogTool, tool, tools.LogErr, why)
	}
}

func newServer(b *Bridge, cfg ServerConfig) *server {
	s := &server{b: b, cfg: cfg, scrub: tools.NewScrubber(secretsOf(cfg)...), kick: make(chan struct{}, 1)}
	s.log = slog.New(tools.RedactHandler(b.log.Handler(), s.scrub)).With(tools.LogMCPServer, cfg.ID)
	return s
}

// poke asks the server's loop to re-list the tools (or reconnect).
func (s *server) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *server) current() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	return s.conn
}

func (s *server) catalog() []tools.Definition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tools.Definition(nil), s.defs...)
}

// loop serves list_changed notifications, lost connections and the
// fallback timer until ctx ends.
func (s *server) loop(ctx context.Context) {
	var tick <-chan time.Time
	if d := s.b.opts.refreshInterval; d > 0 {
		t := time.NewTicker(d)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			s.sync(ctx, false)
		case <-tick:
			s.sync(ctx, true)
		}
	}
}

// sync re-lists the tools of a live connection, or replaces a lost one.
func (s *server) sync(ctx context.Context, timer bool) {
	c := s.current()
	if c != nil && !c.lost.Load() {
		lctx, cancel := context.WithTimeout(ctx, s.b.opts.connectTimeout)
		listed, err := c.listTools(lctx)
		cancel()
		if err == nil {
			s.install(c, listed)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if !c.lost.Load() {
			s.log.Warn("mcp tool list refresh failed; keeping the previous list", tools.LogErr, err.Error())
			return
		}
	}
	if c != nil {
		s.drop(c)
	}
	if !timer && !s.forced.Swap(false) && time.Now().Before(s.retryAt) {
		return
	}
	s.reconnect(ctx)
}

// reconnect makes one connect attempt and installs the connection.
func (s *server) reconnect(ctx context.Context) {
	c, listed, err := s.connectOnce(ctx)
	if err != nil {
		s.retryAt = time.Now().Add(reconnectGap)
		if s.b.life.Err() != nil {
			return
		}
		attrs := []any{tools.LogErr, err.Error()}
		if c != nil && c.stderr != nil {
			if tail := c.stderr.String(); tail != "" {
				attrs = append(attrs, tools.LogStderr, tail)
			}
		}
		s.log.Warn("mcp server skipped: connect failed", attrs...)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.close()
		return
	}
	s.conn = c
	s.mu.Unlock()
	n := s.install(c, listed)
	s.log.Info("mcp server connected", tools.LogTools, n)
}

// drop forgets a lost connection and its tools.
func (s *server) drop(c *conn) {
	s.mu.Lock()
	if s.conn != c {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	had := len(s.defs) > 0
	s.defs = nil
	s.mu.Unlock()
	s.log.Warn("mcp server disconnected")
	c.close()
	if had {
		s.b.changed()
	}
}

// shutdown closes the connection for good.
func (s *server) shutdown() {
	s.mu.Lock()
	c := s.conn
	s.conn, s.defs, s.closed = nil, nil, true
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	s.closePeople()
}

// install builds the catalog from a tool list and reports a change. It
// returns the number of definitions.
func (s *server) install(c *conn, listed []listedTool) int {
	defs := s.definitions(c, listed)
	s.mu.Lock()
	if s.conn != c || s.closed {
		s.mu.Unlock()
		return 0
	}
	same := sameDefs(s.defs, defs)
	s.defs = defs
	s.mu.Unlock()
	if !same {
		s.b.changed()
	}
	return len(defs)
}

// listedTool is a tool as tools/list describes it; the input schema stays
// raw, since decoding it into a struct drops keywords.
type listedTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations annotations     `json:"annotations"`
	Execution   struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

var emptyObject = json.RawMessage(`{"type":"object","properties":{}}`)

func (s *server) definitions(c *conn, listed []listedTool) []tools.Definition {
	var defs []tools.Definition
	taken := map[string]bool{}
	add := func(d tools.Definition, from string) {
		if taken[d.Name] {
			s.log.Warn("mcp tool skipped: its name clashes with another tool of the server", tools.LogTool, from)
			return
		}
		if _, err := tools.Compile(d); err != nil {
			s.log.Warn("mcp tool skipped: invalid definition", tools.LogTool, from, tools.LogErr, err.Error())
			return
		}
		taken[d.Name] = true
		defs = append(defs, d)
	}
	if c.resources {
		for _, d := range s.resourceTools() {
			add(d, d.Name)
		}
	}
	for _, t := range listed {
		if t.Name == "" {
			continue
		}
		if t.Execution.TaskSupport == "required" {
			// Only callable as a task, which the bridge does not do.
			s.log.Debug("mcp tool skipped: it must run as a task", tools.LogTool, t.Name)
			continue
		}
		if why := headerProblem(t.InputSchema); why != "" {
			s.dropOnce(t.Name, why)
			continue
		}
		name := toolName(s.cfg.ID, t.Name)
		desc := strings.TrimSpace(t.Description)
		if desc == "" {
			desc = strings.TrimSpace(t.Title)
		}
		if desc == "" {
			desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, s.cfg.ID)
		}
		input := bytes.TrimSpace(t.InputSchema)
		if len(input) == 0 || string(input) == "null" {
			input = emptyObject
		}
		mcpName := t.Name
		s.headers.Store(mcpName, paramHeaders(input))
		d := tools.Definition{
			Name:        name,
			Description: desc,
			Input:       json.RawMessage(input),
			Run: func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
				return s.callTool(ctx, name, mcpName, call)
			},
		}
		if s.cfg.waits(t) {
			d = s.approvalTool(d, t)
		}
		add(d, t.Name)
	}
	return defs
}

// toolName is "<id>__<tool>" with characters outside [A-Za-z0-9_-] replaced
// by '_', cut to maxName.
func toolName(id, tool string) string {
	var b strings.Builder
	for _, r := range id + "__" + tool {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxName {
		name = name[:maxName]
	}
	return name
}

func sameDefs(a, b []tools.Definition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Input, b[i].Input) ||
			a[i].NeedsApproval() != b[i].NeedsApproval() {
			return false
		}
	}
	return true
}
