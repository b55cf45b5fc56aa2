package bot

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/internal/oauthclient/oauthtest"
)

// oauthPeer is an OAuth-protected MCP server (the real mcp-go server
// behind the fake authorization server's token check) that records who
// each tools/call came from.
type oauthPeer struct {
	as  *oauthtest.Server
	srv *httptest.Server

	mu      sync.Mutex
	callers []string
}

func newOAuthPeer(t *testing.T) *oauthPeer {
	t.Helper()
	p := &oauthPeer{as: oauthtest.New()}
	t.Cleanup(p.as.Close)
	srv := server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Say who the token belongs to")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := req.Header.Get(oauthtest.GrantHeader)
			p.mu.Lock()
			p.callers = append(p.callers, who)
			p.mu.Unlock()
			return mcp.NewToolResultText("you are " + who), nil
		})
	streamable := server.NewStreamableHTTPServer(srv)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.as.Protect(p.srv.URL+"/mcp", streamable).ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *oauthPeer) calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.callers...)
}

// TestMCPOAuth_WorkspaceConnectThenCall: a server with auth: oauth is
// skipped until an admin connects it; the connect link's flow ends at
// /oauth/callback, the connection is stored sealed, the bridge
// reconnects, and a call reaches the server with the connection's token;
// an expired token is refreshed once, and a grant revoked upstream
// becomes a revoked connection and a tool error that says to connect.
func TestMCPOAuth_WorkspaceConnectThenCall(t *testing.T) {
	peer := newOAuthPeer(t)
	dir := t.TempDir()
	keyFile := writeKeyFile(t, genKey(t))
	extra := fmt.Sprintf(`    tools: [tracker]
public_url: https://brain.invalid
secrets: {key_file: %s}
mcp_servers:
  - id: tracker
    url: %s/mcp
    auth: oauth
`, keyFile, peer.srv.URL)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	path := writeConfig(t, dir, fake.URL(), extra)
	ta := startTestApp(t, fake, path, Options{})

	if !strings.Contains(ta.logs.String(), "needs an OAuth connection") {
		t.Fatalf("the skipped server's log does not say it needs a connection:\n%s", ta.logs.String())
	}
	var link struct {
		URL string `json:"url"`
	}
	ta.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": "mcp:tracker"}, &link)
	if !strings.HasPrefix(link.URL, peer.as.URL+"/authorize?") {
		t.Fatalf("connect link %q is not the authorization server's", link.URL)
	}
	// The admin's browser: the fake approves as "admin" and redirects
	// to brain's callback.
	back, err := oauthtest.Follow(link.URL, "admin")
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := ta.do("GET", "/oauth/callback?"+back.Encode(), nil)
	if code != http.StatusOK || !strings.Contains(string(body), "Connected mcp:tracker") {
		t.Fatalf("callback: %d %s", code, body)
	}
	// The flow is used up: the same callback again is refused.
	if code, _, _ := ta.do("GET", "/oauth/callback?"+back.Encode(), nil); code != http.StatusBadRequest {
		t.Fatalf("a second use of the callback: %d, want 400", code)
	}
	ta.waitLog(regexp.MustCompile("mcp server connected"))

	run := func(want string) {
		t.Helper()
		ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("done"))
		s := ta.createSession()
		ta.sendMessage(s.ID, "who am I?")
		_, evs := ta.waitTurns(s.ID, 1)
		for _, ev := range evs {
			if ev.Type == engine.EventToolResult {
				if !strings.Contains(string(ev.Data), want) {
					t.Fatalf("tool result %s, want %q", ev.Data, want)
				}
				return
			}
		}
		t.Fatal("no tool result")
	}
	run("you are admin")
	peer.as.ExpireAccess()
	run("you are admin")
	if n := peer.as.Refreshes(); n != 1 {
		t.Fatalf("refreshes = %d, want 1", n)
	}
	peer.as.RevokeSubject("admin")
	peer.as.ExpireAccess()
	run("needs an OAuth connection")
	if got := peer.calls(); len(got) != 2 {
		t.Fatalf("the server got %d calls (%v), want 2: the call without a connection must not reach it", len(got), got)
	}
	var list struct {
		Connections []struct {
			Provider, Status, Problem string
		} `json:"connections"`
	}
	ta.must(http.StatusOK, "GET", "/v1/connections", nil, &list)
	if len(list.Connections) != 1 || list.Connections[0].Status != "revoked" || !strings.Contains(list.Connections[0].Problem, "refused") {
		t.Fatalf("connections after the upstream revocation: %+v", list.Connections)
	}
	if n := strings.Count(ta.logs.String(), "connection revoked: the provider refused its refresh"); n != 1 {
		t.Fatalf("the revocation was logged %d times, want once", n)
	}
	// No token or client secret in plain text anywhere in the database.
	rows, raw := dumpSQLite(t, filepath.Join(dir, "data", "brain.db"))
	for _, tok := range peer.as.Secrets() {
		if strings.Contains(rows, tok) || strings.Contains(string(raw), tok) {
			t.Fatalf("a credential of the authorization server is stored in plain text")
		}
	}
}
