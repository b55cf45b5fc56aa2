package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gh "github.com/google/go-github/v62/github"

	"brain/bot/connect"
	"brain/engine/model/fakemodel"
)

// ghUserApp is brain with GitHub user tokens on, against ghOAuthFake.
func ghUserApp(t *testing.T) (*testApp, *ghOAuthFake, *slackClock) {
	t.Helper()
	g := newGHOAuthFake(t)
	clk := &slackClock{}
	extra := fmt.Sprintf(`public_url: https://brain.invalid
secrets: {key_file: %s}
tools:
  github:
    token: ghp_apptoken
    repos: [acme/widgets]
    base_url: %s/api/v3/
    user_tokens: {client_id: %s, client_secret: %s, web_url: %s}
`, writeKeyFile(t, genKey(t)), g.srv.URL, g.clientID, g.clientSecret, g.srv.URL)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	ta := startTestApp(t, fake, writeConfig(t, t.TempDir(), fake.URL(), extra), Options{Clock: clk.Now})
	return ta, g, clk
}

// connectGitHub runs the connect flow for person as GitHub user login,
// as their browser would.
func connectGitHub(t *testing.T, ta *testApp, g *ghOAuthFake, person, login string) {
	t.Helper()
	ta.must(http.StatusOK, "POST", "/v1/people", map[string]any{"id": person}, nil)
	var link struct{ URL string }
	ta.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": "github", "person": person}, &link)
	if !strings.HasPrefix(link.URL, g.srv.URL+"/login/oauth/authorize?") {
		t.Fatalf("connect link %q is not GitHub's authorize URL", link.URL)
	}
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(link.URL + "&login=" + url.QueryEscape(login))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := resp.Location()
	if err != nil || !strings.HasPrefix(back.String(), "https://brain.invalid/oauth/callback?") {
		t.Fatalf("GitHub redirected to %v (%v)", back, err)
	}
	code, _, body := ta.do("GET", "/oauth/callback?"+back.RawQuery, nil)
	if code != http.StatusOK || !strings.Contains(string(body), "Connected github") {
		t.Fatalf("callback: %d %s", code, body)
	}
}

// whoAmI calls GET /user with go-github and the person's user token, as a
// GitHub tool acting as them does.
func whoAmI(t *testing.T, ta *testApp, g *ghOAuthFake, person string) (string, error) {
	t.Helper()
	tok, err := ta.app.connect.AccessToken(context.Background(), person, "github")
	if err != nil {
		return "", err
	}
	c, err := gh.NewClient(nil).WithAuthToken(tok).WithEnterpriseURLs(g.srv.URL+"/api/v3/", g.srv.URL+"/api/uploads/")
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := c.Users.Get(context.Background(), "")
	if err != nil {
		return "", err
	}
	return u.GetLogin(), nil
}

func TestGitHubUserTokens_ConnectActAsEachPersonRefreshRevoke(t *testing.T) {
	ta, g, clk := ghUserApp(t)
	connectGitHub(t, ta, g, "alice", "alice-gh")
	connectGitHub(t, ta, g, "bob", "bob-gh")
	for _, c := range []struct{ person, login string }{{"alice", "alice-gh"}, {"bob", "bob-gh"}, {"alice", "alice-gh"}} {
		if got, err := whoAmI(t, ta, g, c.person); err != nil || got != c.login {
			t.Fatalf("%s's token acts as %q (%v), want %s", c.person, got, err, c.login)
		}
	}
	if _, err := ta.app.connect.AccessToken(context.Background(), "carol", "github"); !errors.As(err, new(*connect.NotConnectedError)) {
		t.Fatalf("carol, never connected: %v, want NotConnectedError", err)
	}

	// Near expiry (GitHub's 8 hours), the token is refreshed once and the
	// refresh token rotates; the old pair no longer works upstream.
	clk.mu.Lock()
	clk.off += 8*time.Hour - time.Minute
	clk.mu.Unlock()
	if got, err := whoAmI(t, ta, g, "alice"); err != nil || got != "alice-gh" {
		t.Fatalf("after the refresh: %q %v", got, err)
	}
	if got, err := whoAmI(t, ta, g, "alice"); err != nil || got != "alice-gh" {
		t.Fatalf("again: %q %v", got, err)
	}
	if n, _ := g.counts(); n != 1 {
		t.Fatalf("refreshes = %d, want 1", n)
	}

	// The person revokes the app on GitHub: the next refresh is refused
	// (200 bad_refresh_token), the connection is revoked, logged once.
	g.revokeAll()
	clk.mu.Lock()
	clk.off += 8 * time.Hour
	clk.mu.Unlock()
	for range 2 {
		var nc *connect.NotConnectedError
		if _, err := ta.app.connect.AccessToken(context.Background(), "alice", "github"); !errors.As(err, &nc) || !strings.Contains(nc.Problem, "refused") {
			t.Fatalf("after upstream revocation: %v, want NotConnectedError saying the refresh was refused", err)
		}
	}
	var list struct {
		Connections []struct{ Status, Provider string }
	}
	ta.must(http.StatusOK, "GET", "/v1/connections?person=alice", nil, &list)
	if len(list.Connections) != 1 || list.Connections[0].Status != "revoked" {
		t.Fatalf("alice's connections: %+v", list)
	}
	logs := ta.logs.String()
	if n := strings.Count(logs, "connection revoked: the provider refused its refresh"); n != 1 {
		t.Fatalf("revocation logged %d times", n)
	}
	if strings.Contains(logs, "ghu_") || strings.Contains(logs, "ghr_") || strings.Contains(logs, g.clientSecret) {
		t.Fatal("a GitHub token or the client secret reached the log")
	}
	if _, calls := g.counts(); strings.Join(calls, ",") != "alice-gh,bob-gh,alice-gh,alice-gh,alice-gh" {
		t.Fatalf("GET /user answered for %v", calls)
	}
}
