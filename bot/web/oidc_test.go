package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/tools"
)

// slackConsole is a console with Sign in with Slack against the fake,
// whose authorization page signs in U0ADA.
func slackConsole(t *testing.T, teamID string) (*console, *slackfake.Server) {
	t.Helper()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	t.Cleanup(func() { recordSlack(t, fake) })
	fake.EnableOIDC("cid", "csecret", slackfake.OIDCUser{UserID: "U0ADA", TeamID: "T0FAKE", Name: "Ada"})
	cfg := keyed()
	cfg.SlackSignIn = &SlackSignIn{ClientID: "cid", ClientSecret: "csecret", TeamID: teamID,
		AuthorizeURL: fake.URL() + slackfake.AuthorizePath, APIURL: fake.URL() + "/api/"}
	c := newConsole(t, cfg)
	cfg.SlackSignIn.RedirectURL = c.srv.URL + SlackCallbackPath
	return c, fake
}

// follow goes through the sign-in: start, Slack's page, the callback.
func (c *console) slackSignIn(next string) (*http.Response, string) {
	c.t.Helper()
	resp, _ := c.get("/login/slack?next=" + url.QueryEscape(next))
	if resp.StatusCode != http.StatusFound {
		c.t.Fatalf("start: %d", resp.StatusCode)
	}
	at, _ := url.Parse(resp.Header.Get("Location"))
	q := at.Query()
	if q.Get("scope") != "openid profile" || q.Get("nonce") == "" || q.Get("state") == "" || q.Get("redirect_uri") != c.srv.URL+SlackCallbackPath {
		c.t.Fatalf("authorize request %s", at)
	}
	resp, err := c.client.Get(at.String())
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(back, c.srv.URL+SlackCallbackPath) {
		c.t.Fatalf("slack's page: %d %s", resp.StatusCode, back)
	}
	return c.get(strings.TrimPrefix(back, c.srv.URL))
}

func TestConsole_SignInWithSlack(t *testing.T) {
	c, fake := slackConsole(t, "T0FAKE")
	c.eng.addSession(engine.Session{ID: "ses1", Origin: engine.OriginSlack, StartedBy: "U0ADA", Status: engine.StatusIdle})
	c.eng.approvals["apr1"] = engine.Approval{ID: "apr1", SessionID: "ses1", Status: engine.ApprovalPending, Card: tools.Card{Title: "Refund"}}

	resp, page := c.slackSignIn("/approvals/apr1")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `url=/approvals/apr1`) {
		t.Fatalf("callback: %d\n%s", resp.StatusCode, page)
	}
	if calls := fake.Calls("openid.connect.token"); len(calls) != 1 || calls[0].Params.Get("client_secret") != "csecret" || calls[0].Error != "" {
		t.Fatalf("token exchange %+v", calls)
	}
	resp, page = c.get("/approvals/apr1")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Ada (Slack)") {
		t.Fatalf("signed in page: %d\n%s", resp.StatusCode, page)
	}
	if resp, _ := c.post("/approvals/apr1/decision", url.Values{"csrf": {c.csrf(page)}, "decision": {"approve"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("decide: %d", resp.StatusCode)
	}
	// The decision carries the Slack identity, not a key's: the engine
	// applies the approver rules to U0ADA as to a click in Slack.
	if d := c.eng.decisions; len(d) != 1 || d[0].By != "U0ADA" || d[0].ViaAPI {
		t.Fatalf("decisions %+v", d)
	}
}

func TestConsole_SlackSignInRefusals(t *testing.T) {
	t.Run("a callback this browser did not start", func(t *testing.T) {
		c, _ := slackConsole(t, "")
		resp, _ := c.get("/login/slack/callback?code=x&state=forged")
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("forged state: %d", resp.StatusCode)
		}
	})
	t.Run("a callback replayed", func(t *testing.T) {
		c, _ := slackConsole(t, "")
		resp, _ := c.get("/login/slack?next=/")
		at := resp.Header.Get("Location")
		r, _ := c.client.Get(at)
		r.Body.Close()
		cb := strings.TrimPrefix(r.Header.Get("Location"), c.srv.URL)
		if resp, _ := c.get(cb); resp.StatusCode != http.StatusOK {
			t.Fatalf("first callback: %d", resp.StatusCode)
		}
		if resp, _ := c.get(cb); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("replayed callback: %d", resp.StatusCode)
		}
	})
	t.Run("another workspace", func(t *testing.T) {
		c, _ := slackConsole(t, "T0OTHER")
		if resp, body := c.slackSignIn("/"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "T0OTHER") {
			t.Fatalf("other team: %d %s", resp.StatusCode, body)
		}
		if resp, _ := c.get("/sessions"); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("signed in anyway: %d", resp.StatusCode)
		}
	})
}
