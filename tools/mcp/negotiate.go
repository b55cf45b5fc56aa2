package mcp

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"brain/tools"
)

// Without a protocol: key a server is negotiated with: brain sends
// 2026-07-28's server/discover, and a server that answers it with an
// error (it predates 2026-07-28) gets the 2025-11-25 handshake at once;
// one that ignores it gets the handshake after the discover bound (2s).
// The answer is remembered for the server for the life of the process,
// so that bound is paid once, and an HTTP server found to speak
// 2025-11-25 is connected again at once with the standalone GET stream
// that carries its list_changed notifications on that revision.

// protocolFor is the revision connect asks for, and whether it was
// negotiated (no protocol: key).
func (s *server) protocolFor() (version string, auto bool) {
	switch {
	case s.cfg.Protocol != "":
		return s.cfg.Protocol, false
	case s.legacy.Load():
		return ProtocolLegacy, true
	}
	return ProtocolStateless, true
}

// settle remembers what a negotiated connection found. It reports whether
// the connection should be made again now: an HTTP server that speaks
// 2025-11-25, connected without the GET stream the first time.
func (s *server) settle(c *conn, auto bool) (again bool) {
	if !auto || mcp.IsModernProtocol(c.version) || s.legacy.Swap(true) {
		return false
	}
	s.log.Debug("mcp server speaks 2025-11-25; remembered until restart", tools.LogProtocol, c.version)
	return c.http != nil
}

// listen opens 2026-07-28's subscriptions/listen stream for the tool
// list changes of a server that announces them: that revision has no
// standalone GET stream. Its acknowledgement re-lists the tools once
// (conn.notify); a stream that ends leaves the refresh timer.
func (c *conn) listen(caps mcp.ServerCapabilities) {
	if !mcp.IsModernProtocol(c.version) || caps.Tools == nil || !caps.Tools.ListChanged {
		return
	}
	stop, err := c.client.ListenAsync(c.s.b.life, mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) {
		c.s.log.Debug("mcp subscriptions/listen ended", tools.LogErr, err.Error())
	})
	if err == nil {
		c.unlisten = stop
	}
}

// errConnectAgain is connect's answer when settle asks for another go.
var errConnectAgain = errors.New("connect again at 2025-11-25")

// connectOnce is connect, made again once when settle asks for it.
func (s *server) connectOnce(ctx context.Context) (*conn, []listedTool, error) {
	c, listed, err := s.connect(ctx)
	if errors.Is(err, errConnectAgain) {
		return s.connect(ctx)
	}
	return c, listed, err
}
