package bot

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"brain/engine/model/fakemodel"
)

// The span of an MCP tool call carries the server, the method and the
// protocol revision each server speaks: negotiated (mcp-go's server
// speaks 2026-07-28) and pinned to 2025-11-25.
func TestTracing_MCPToolSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	newPeer := func() *httptest.Server {
		srv := server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))
		srv.AddTool(mcp.NewTool("lookup", mcp.WithDescription("Look up an issue")),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("open"), nil
			})
		p := httptest.NewServer(server.NewStreamableHTTPServer(srv))
		t.Cleanup(p.Close)
		return p
	}
	modern, legacy := newPeer(), newPeer()
	ta := newTestApp(t, fmt.Sprintf(`    tools: [modern, legacy]
mcp_servers:
  - id: modern
    url: %s/mcp
  - id: legacy
    url: %s/mcp
    protocol: "2025-11-25"
`, modern.URL, legacy.URL), Options{SpanExporter: exp})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "modern__lookup", Input: `{}`}, fakemodel.Call{Name: "legacy__lookup", Input: `{}`}),
		fakemodel.Text("Both open."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "check")
	ta.waitTurns(s.ID, 1)
	spans := waitSpan(t, exp, "invoke_agent default")
	want := map[string]string{"execute_tool modern__lookup": "modern 2026-07-28", "execute_tool legacy__lookup": "legacy 2025-11-25"}
	for _, sp := range spans {
		w, ok := want[sp.Name]
		if !ok {
			continue
		}
		a := attrs(sp)
		got := a["brain.mcp.server"].AsString() + " " + a["mcp.protocol.version"].AsString()
		if got != w || a["mcp.method.name"].AsString() != "tools/call" {
			t.Errorf("%s: %s method %q, want %s tools/call", sp.Name, got, a["mcp.method.name"].AsString(), w)
		}
		delete(want, sp.Name)
	}
	if len(want) > 0 {
		t.Fatalf("no spans %v in %v", want, spanNames(spans))
	}
}
