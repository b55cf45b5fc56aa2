package mcp_test

import (
	"context"
	"testing"

	brainmcp "brain/tools/mcp"
)

// BenchmarkConnect measures connecting a new bridge (process start: no
// remembered answer) to one HTTP server, to the first tool list, by what
// the server speaks and the protocol: key. The pinned rows are the floor
// the negotiated ones are read against (docs/benchmarks.md).
//
//	go test -run '^$' -bench BenchmarkConnect -benchtime 5x ./tools/mcp/
func BenchmarkConnect(b *testing.B) {
	cases := []struct {
		name     string
		server   func(t testing.TB) string
		protocol string
	}{
		{"legacy-server/pinned-2025-11-25", func(t testing.TB) string { return newLegacyServer(t, false).URL }, brainmcp.ProtocolLegacy},
		{"legacy-server-refuses-discover/negotiated", func(t testing.TB) string { return newLegacyServer(t, false).URL }, ""},
		{"legacy-server-ignores-discover/negotiated", func(t testing.TB) string { return newLegacyServer(t, true).URL }, ""},
		{"2026-server/pinned-2026-07-28", func(t testing.TB) string { return newMRTRServer(t).URL }, brainmcp.ProtocolStateless},
		{"2026-server/negotiated", func(t testing.TB) string { return newMRTRServer(t).URL }, ""},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			url := c.server(b)
			for b.Loop() {
				br := brainmcp.Connect(context.Background(), []brainmcp.ServerConfig{{ID: "s", Transport: brainmcp.TransportHTTP, URL: url, Protocol: c.protocol}},
					nil, brainmcp.WithRefreshInterval(0))
				if len(br.Tools()) == 0 {
					b.Fatal("not connected")
				}
				_ = br.Close()
			}
		})
	}
}
