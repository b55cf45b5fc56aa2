package mcp_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	brainmcp "brain/tools/mcp"
)

// Without protocol:, a server that speaks only 2025-11-25 is found by
// negotiation (discover refused: at once; ignored: after the bound), then
// connected again at once over HTTP with the GET stream; the answer is
// remembered, so a later reconnect goes straight to the handshake.
func TestBridge_NegotiatesLegacyOnceAndRemembers(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignore=%v", ignore), func(t *testing.T) {
			ls := newLegacyServer(t, ignore)
			b, _ := connect(t, []brainmcp.ServerConfig{{ID: "old", Transport: brainmcp.TransportHTTP, URL: ls.URL}},
				brainmcp.WithRefreshInterval(0), brainmcp.WithDiscoverTimeout(200*time.Millisecond))
			if out, te := run(t, t.Context(), b, "old__echo", `{}`); te != nil || content(t, out) != "echoed" {
				t.Fatalf("echo: %s, %v", out, te)
			}
			ls.mu.Lock()
			first := slices.Clone(ls.methods)
			ls.methods = nil
			ls.mu.Unlock()
			if len(first) < 3 || first[0] != "server/discover" || first[1] != "initialize" || slices.Index(first[2:], "initialize") < 0 {
				t.Fatalf("first connect sent %v: want discover, a handshake, then the handshake again", first)
			}
			brainmcp.Drop(b, "old")
			eventually(t, "the reconnect", func() bool {
				ls.mu.Lock()
				defer ls.mu.Unlock()
				return slices.Contains(ls.methods, "tools/list")
			})
			ls.mu.Lock()
			defer ls.mu.Unlock()
			if slices.Contains(ls.methods, "server/discover") || ls.methods[0] != "initialize" {
				t.Fatalf("reconnect sent %v: want the handshake without discover", ls.methods)
			}
		})
	}
}
