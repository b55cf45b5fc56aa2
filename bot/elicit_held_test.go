package bot

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// heldPeer is a real mcp-go server at protocol 2025-11-25 whose one tool
// asks for confirmation with elicitation/create while the call waits
// (on the call's own SSE stream) and reports the answer it got.
type heldPeer struct {
	*httptest.Server
	mu      sync.Mutex
	answers []string
}

func newHeldPeer(t *testing.T) *heldPeer {
	t.Helper()
	p := &heldPeer{}
	srv := server.NewMCPServer("db", "1.0.0", server.WithToolCapabilities(true), server.WithElicitation())
	srv.AddTool(mcp.NewTool("drop", mcp.WithDescription("Drop a table"), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: "Really drop users?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
					"confirm": map[string]any{"type": "boolean"}}},
			}})
			answer := "error"
			if err == nil {
				answer = fmt.Sprintf("%s %v", res.Action, res.Content)
			}
			p.mu.Lock()
			p.answers = append(p.answers, answer)
			p.mu.Unlock()
			return mcp.NewToolResultText("got " + answer), nil
		})
	p.Server = httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(p.Close)
	return p
}

func (p *heldPeer) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.answers...)
}

// A 2025-11-25 server's elicitation during the call reaches the Slack
// thread as buttons while the call waits; the click goes back to the
// server on the held call, which completes, once.
func TestSlack_MCPHeldElicitationAnsweredByButton(t *testing.T) {
	peer := newHeldPeer(t)
	sa := newSlackAppAgent(t, "    tools: [ask, db]\n", fmt.Sprintf(`mcp_servers:
  - id: db
    url: %s/mcp
    protocol: "2025-11-25"
`, peer.URL))
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "db__drop", Input: `{}`}),
		fakemodel.Text("Dropped."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> drop users", "")
	q := sa.waitThread(ts, "Really drop users?")
	for _, want := range []string{"Yes", "No", "Decline", "Cancel"} {
		if !strings.Contains(string(q.Blocks), want) {
			t.Fatalf("question lacks %s: %s", want, q.Blocks)
		}
	}
	sa.click("U1", q, "brain_answer") // the first button: Yes
	sa.waitThread(ts, "Dropped.")
	got, evs := sa.waitTurns(sa.session(ts).ID, 1)
	if got.Status != engine.StatusIdle {
		t.Fatalf("status %s", got.Status)
	}
	if a := peer.got(); len(a) != 1 || a[0] != "accept map[confirm:true]" {
		t.Fatalf("server got %v", a)
	}
	var n int
	for _, ev := range evs {
		if ev.Type == engine.EventTurnStarted {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d turns, want 1: the answer went to the held call", n)
	}
}
