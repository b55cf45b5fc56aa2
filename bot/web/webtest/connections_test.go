package webtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"brain/internal/oauthclient/oauthtest"
)

// TestConsole_ConnectionsInABrowser connects an account from the
// Connections page as a person would: Connect sends the browser to the
// authorization server (the fake approves at once), which sends it back
// through brain's callback to the page, now listing the connection
// (never its token); Revoke forgets it.
func TestConsole_ConnectionsInABrowser(t *testing.T) {
	as := oauthtest.New()
	t.Cleanup(as.Close)
	mcpSrv := server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))
	mcpSrv.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Say who the token belongs to")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("you are " + req.Header.Get(oauthtest.GrantHeader)), nil
		})
	streamable := server.NewStreamableHTTPServer(mcpSrv)
	var tracker *httptest.Server
	tracker = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as.Protect(tracker.URL+"/mcp", streamable).ServeHTTP(w, r)
	}))
	t.Cleanup(tracker.Close)
	r := newRig(t, "mcp_servers:\n  - {id: tracker, url: "+tracker.URL+"/mcp, auth: oauth, per: person}\n")

	r.do("sign in with a key and open the connections page",
		chromedp.Navigate(r.base+"/connections"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), apiKey),
		chromedp.Submit(chromedp.CSS(`form.login`)),
		chromedp.WaitVisible(`//h1[text()="Connections"]`),
		chromedp.WaitVisible(`//p[contains(text(),"You have connected no account")]`),
		chromedp.WaitVisible(`//nav//a[@href="/connections" and @aria-current="page"]`),
	)
	r.do("connect the tracker",
		chromedp.Click(`//button[text()="Connect mcp:tracker"]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(text(),"Connected mcp:tracker.")]`),
		chromedp.WaitVisible(`//table//td[@data-label="Provider" and text()="mcp:tracker"]`),
		chromedp.WaitVisible(`//span[contains(@class,"status-connected")]`),
	)
	text := get(r, "read the page", chromedp.Evaluate[string](`document.body.innerText`))
	for _, secret := range as.Secrets() {
		if strings.Contains(text, secret) {
			t.Fatal("the connections page shows a token")
		}
	}
	var list struct {
		Connections []struct {
			PersonID string `json:"person_id"`
			Provider string `json:"provider"`
			Status   string `json:"status"`
		} `json:"connections"`
	}
	r.api("GET", "/v1/connections", nil, &list)
	if len(list.Connections) != 1 || list.Connections[0].Provider != "mcp:tracker" || list.Connections[0].PersonID == "" {
		t.Fatalf("connections %+v: want the signed-in person's mcp:tracker", list.Connections)
	}
	r.do("revoke it",
		chromedp.Click(`(//button[text()="Revoke"])[1]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(text(),"Revoked the connection to mcp:tracker")]`),
		chromedp.WaitVisible(`//span[contains(@class,"status-revoked")]`),
	)
	r.api("GET", "/v1/connections", nil, &list)
	if len(list.Connections) != 1 || list.Connections[0].Status != "revoked" {
		t.Fatalf("after Revoke: %+v", list.Connections)
	}
	// A link made for someone else (as Linear or GitHub show them) is
	// refused, with no button to start anything.
	r.do("follow someone else's link",
		chromedp.Navigate(r.base+"/connections?connect=mcp%3Atracker&for=person_of_someone_else"),
		chromedp.WaitVisible(`//p[@role="alert" and contains(text(),"made for someone else")]`))
	if n := get(r, "count the link's forms", chromedp.Evaluate[int](`document.querySelectorAll('input[name=for][value=person_of_someone_else]').length`)); n != 0 {
		t.Error("someone else's link offers a Connect button")
	}
	if n := r.dialogs.Load(); n != 0 {
		t.Errorf("%d dialogs opened", n)
	}
}
