package bot

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

const mcpToken = "mcp-bearer-token-123456"

func TestMCP_ServerToolsOfferedAndCalled(t *testing.T) {
	srv := server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("lookup", mcp.WithDescription("Look up an issue"), mcp.WithString("id", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("issue " + req.GetString("id", "") + " is open"), nil
		})
	streamable := server.NewStreamableHTTPServer(srv)
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+mcpToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		streamable.ServeHTTP(w, r)
	}))
	// Closed after the app (cleanups run last-registered first), whose MCP
	// client holds a stream open to it.
	t.Cleanup(peer.Close)

	extra := fmt.Sprintf(`    tools: [tracker]
mcp_servers:
  - id: tracker
    url: %s/mcp
    bearer_token: %s
  - id: broken
    command: /nonexistent/mcp-server
`, peer.URL, mcpToken)
	ta := newTestApp(t, extra, Options{})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__lookup", Input: `{"id":"ENG-7"}`}),
		fakemodel.Text("It is open."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "is ENG-7 open?")
	_, evs := ta.waitTurns(s.ID, 1)
	found := false
	for _, ev := range evs {
		if ev.Type == engine.EventToolResult {
			found = strings.Contains(string(ev.Data), "issue ENG-7 is open") && !strings.Contains(string(ev.Data), `"is_error":true`)
		}
	}
	if !found {
		t.Fatalf("tool result missing:\n%v", evs)
	}
	if !strings.Contains(string(ta.fake.Requests()[0].Raw), `"name":"tracker__lookup"`) {
		t.Fatal("MCP tool not offered")
	}
	metrics := ta.metricsText()
	for _, want := range []string{`brain_mcp_calls_total{server="tracker"} 1`, `brain_mcp_call_errors_total{server="tracker"} 0`,
		`brain_mcp_calls_total{server="broken"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}
	if !strings.Contains(ta.logs.String(), "broken") {
		t.Fatal("the server that failed to connect was not logged")
	}
	if strings.Contains(ta.logs.String(), mcpToken) {
		t.Fatal("bearer token in the logs")
	}
}
