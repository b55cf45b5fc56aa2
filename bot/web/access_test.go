package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/tools"
)

// The roles the matrix walks: a browser not signed in, a workspace
// member signed in with Slack, an approver of the agent, a key holder.
var roles = []string{"anonymous", "member", "approver", "admin"}

// visitorAs is the console session of role.
func visitorAs(role string) visitor {
	switch role {
	case "member":
		return visitor{signedIn: true, name: "Mem (Slack)", by: "U0MEM"}
	case "approver":
		return visitor{signedIn: true, name: "Apr (Slack)", by: "U0APR"}
	case "admin":
		return visitor{signedIn: true, name: "ops", by: "ops", viaKey: true, admin: true}
	}
	return visitor{} // a guest: the sign-in page was loaded
}

// as makes c's client the browser of role; it returns the CSRF token of
// its forms.
func (c *console) as(role string) string {
	c.t.Helper()
	v := c.s.auth.put(visitorAs(role))
	u, _ := url.Parse(c.srv.URL)
	c.client.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: v.token, Path: "/"}})
	return v.csrf
}

// othersConsole is a keyed console with Sign in with Slack, holding
// another person's running API session and its pending approval, which
// U0APR may decide.
func othersConsole(t *testing.T, slackURL string) *console {
	t.Helper()
	cfg := keyed()
	cfg.SlackSignIn = &SlackSignIn{ClientID: "cid", ClientSecret: "csecret", AuthorizeURL: slackURL + slackfake.AuthorizePath,
		APIURL: slackURL + "/api/", RedirectURL: "http://console.test" + SlackCallbackPath}
	c := newConsole(t, cfg)
	c.eng.approvers = map[string][]string{"default": {"U0APR"}}
	c.eng.addSession(engine.Session{ID: "ses-other", Agent: "default", Origin: engine.OriginAPI, StartedBy: "U0OTHER", Status: engine.StatusRunning})
	c.eng.appendEvent(t, "ses-other", engine.Input{Text: "refund order 7", Author: "U0OTHER"})
	c.eng.approvals["apr-other"] = engine.Approval{ID: "apr-other", SessionID: "ses-other", Agent: "default", Status: engine.ApprovalPending,
		Tool: "issue_refund", Input: mustJSON(map[string]any{"order": "secret-order-7"}), Card: tools.Card{Title: "Refund"}}
	return c
}

// allowedFor is each route's allowed roles, acting on another person's
// session and approval. A route the console serves without a line here
// fails the test: every new route needs its rule decided.
var allowedFor = map[string][]string{
	"GET /static/":                  roles,
	"GET /login":                    roles,
	"POST /login":                   roles,
	"POST /logout":                  roles,
	"GET /login/slack":              roles,
	"GET /login/slack/callback":     nil, // no sign-in was started: refused for all
	"GET /{$}":                      {"member", "approver", "admin"},
	"GET /sessions":                 {"member", "approver", "admin"},
	"POST /sessions":                {"member", "approver", "admin"},
	"GET /sessions/{id}":            {"admin"},
	"GET /sessions/{id}/live":       {"admin"},
	"POST /sessions/{id}/messages":  {"admin"},
	"POST /sessions/{id}/cancel":    {"admin"},
	"POST /sessions/{id}/resume":    {"admin"},
	"GET /approvals":                {"member", "approver", "admin"},
	"GET /approvals/{id}":           {"approver", "admin"},
	"POST /approvals/{id}/decision": {"approver", "admin"},
	"POST /approvals/{id}/retry":    {"approver", "admin"},
	"GET /schedules":                {"admin"},
	"POST /schedules/{name}/run":    {"admin"},
	"GET /status":                   {"admin"},
	"GET /inbox":                    {"member", "approver", "admin"},
	"GET /usage":                    {"admin"},
	"GET /memory":                   {"admin"},
	"GET /skills":                   {"admin"},
	"POST /memory/{action}":         {"admin"},
	"GET /budgets":                  {"admin"},
	"POST /budgets/raise":           {"admin"},
	// Everyone signed in has a connections page; this console keeps no
	// connections, so connect and revoke answer 404 (connections_test.go
	// walks who may do what where they are kept).
	"GET /connections":               {"member", "approver", "admin"},
	"POST /connections/connect":      nil,
	"POST /connections/{id}/revoke":  nil,
	"POST /sessions/{id}/retry-call": {"admin"},
}

// pathOf fills a route pattern's wildcards with the other person's
// objects.
func pathOf(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	r := strings.NewReplacer("{$}", "", "{name}", "digest", "{action}", "edit")
	path = r.Replace(path)
	switch {
	case strings.HasPrefix(path, "/sessions/"):
		path = strings.Replace(path, "{id}", "ses-other", 1)
	case strings.HasPrefix(path, "/approvals/"):
		path = strings.Replace(path, "{id}", "apr-other", 1)
	case path == "/static/":
		path = "/static/console.css"
	}
	return method, path
}

// TestConsole_RoleMatrix walks every route the console serves as each
// role, on a fresh console each time, and checks who got through.
func TestConsole_RoleMatrix(t *testing.T) {
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	probe := othersConsole(t, fake.URL())
	if len(probe.s.routes) != len(allowedFor) {
		t.Errorf("the console serves %d routes, the matrix has %d", len(probe.s.routes), len(allowedFor))
	}
	for _, rt := range probe.s.routes {
		want, ok := allowedFor[rt.pattern]
		if !ok {
			t.Errorf("route %q has no rule in this matrix: decide who may reach it", rt.pattern)
			continue
		}
		for _, role := range roles {
			c := othersConsole(t, fake.URL())
			csrf := c.as(role)
			method, path := pathOf(rt.pattern)
			got := c.reach(method, path, url.Values{"csrf": {csrf}, "text": {"hello"}, "decision": {"approve"}, "key": {testKey}, "call": {"call-1"}, "tool": {"lookup"}})
			if got != slices.Contains(want, role) {
				t.Errorf("%s %s as %s: allowed=%v, want %v", method, path, role, got, !got)
			}
		}
	}
}

// reach makes one request and says whether it got through: a page, a
// redirect elsewhere than the sign-in, a stream; 401, 403, 404 and the
// sign-in redirect are refusals. Anything else fails the test.
func (c *console) reach(method, path string, form url.Values) bool {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var req *http.Request
	if method == http.MethodPost {
		req, _ = http.NewRequestWithContext(ctx, method, c.srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req, _ = http.NewRequestWithContext(ctx, method, c.srv.URL+path, nil)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close() // a live stream ends here
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return false
	case http.StatusSeeOther:
		return !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=")
	case http.StatusOK, http.StatusFound:
		return true
	}
	c.t.Fatalf("%s %s: unexpected %d", method, path, resp.StatusCode)
	return false
}

// TestConsole_MemberSeesOnlyTheirs: lists, filters, pages and streams
// show a member their sessions (started or written in) and approvals,
// and nothing of anyone else's; actions follow the platforms' rules.
func TestConsole_MemberSeesOnlyTheirs(t *testing.T) {
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	c := othersConsole(t, fake.URL())
	c.eng.addSession(engine.Session{ID: "ses-dm", Agent: "default", Origin: engine.OriginSlack, ThreadKey: "slack:T1:D0OTHER:1.1", StartedBy: "U0OTHER", Status: engine.StatusIdle})
	c.eng.addSession(engine.Session{ID: "ses-mine", Agent: "solo", Origin: engine.OriginConsole, StartedBy: "U0MEM", Status: engine.StatusRunning})
	c.eng.addSession(engine.Session{ID: "ses-wrote", Agent: "default", Origin: engine.OriginAPI, StartedBy: "U0OTHER", Status: engine.StatusInterrupted})
	c.eng.appendEvent(t, "ses-wrote", engine.Input{Text: "me too", Author: "U0MEM"})
	c.eng.approvals["apr-mine"] = engine.Approval{ID: "apr-mine", SessionID: "ses-mine", Agent: "solo", Status: engine.ApprovalPending, Card: tools.Card{Title: "Mine"}}

	csrf := c.as("member")
	for _, path := range []string{"/sessions", "/", "/sessions?status=running", "/sessions?origin=slack", "/sessions?agent=default", "/sessions?page=2"} {
		_, page := c.get(path)
		if strings.Contains(page, "ses-other") || strings.Contains(page, "ses-dm") {
			t.Errorf("%s shows another person's session:\n%s", path, page)
		}
	}
	if _, page := c.get("/sessions"); !strings.Contains(page, "ses-mine") || !strings.Contains(page, "ses-wrote") {
		t.Errorf("the member's own sessions are missing:\n%s", page)
	}
	_, page := c.get("/approvals")
	if strings.Contains(page, "apr-other") || strings.Contains(page, "secret-order-7") || !strings.Contains(page, "apr-mine") {
		t.Errorf("approvals as a member:\n%s", page)
	}
	for _, path := range []string{"/sessions/ses-dm", "/approvals/apr-other", "/sessions/ses-other/live"} {
		if resp, page := c.get(path); resp.StatusCode != http.StatusNotFound || strings.Contains(page, "secret-order-7") {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	if !c.reach("GET", "/sessions/ses-wrote/live", nil) {
		t.Error("the live timeline of a session the member wrote in was refused")
	}
	// Cancel and resume as in Slack: only the person who started it (or
	// an approver, for cancel).
	if resp, _ := c.post("/sessions/ses-wrote/cancel", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cancel of a session someone else started: %d", resp.StatusCode)
	}
	if resp, _ := c.post("/sessions/ses-wrote/resume", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("resume of a session someone else started: %d", resp.StatusCode)
	}
	if resp, _ := c.post("/sessions/ses-mine/cancel", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("cancel of the member's own session: %d", resp.StatusCode)
	}
	if len(c.eng.cancels) != 1 || c.eng.cancels[0] != "ses-mine" {
		t.Errorf("cancels %v", c.eng.cancels)
	}

	// The approver sees the approval they decide, not its session.
	c.as("approver")
	if _, page := c.get("/approvals"); !strings.Contains(page, "apr-other") {
		t.Errorf("approvals as the approver:\n%s", page)
	}
	if _, page := c.get("/sessions"); strings.Contains(page, "ses-other") {
		t.Errorf("the approver's sessions list shows another person's session:\n%s", page)
	}
}

// TestConsole_AdminFromConfig: a person listed in console.admins who
// signs in with Slack sees everyone's sessions; the same person
// without the listing does not.
func TestConsole_AdminFromConfig(t *testing.T) {
	for _, admins := range [][]string{{"U0ADA"}, nil} {
		fake := slackfake.New()
		t.Cleanup(fake.Close)
		fake.EnableOIDC("cid", "csecret", slackfake.OIDCUser{UserID: "U0ADA", TeamID: "T0FAKE", Name: "Ada"})
		cfg := keyed()
		cfg.Admins = admins
		cfg.SlackSignIn = &SlackSignIn{ClientID: "cid", ClientSecret: "csecret", AuthorizeURL: fake.URL() + slackfake.AuthorizePath, APIURL: fake.URL() + "/api/"}
		c := newConsole(t, cfg)
		cfg.SlackSignIn.RedirectURL = c.srv.URL + SlackCallbackPath
		c.eng.addSession(engine.Session{ID: "ses-other", Agent: "default", Origin: engine.OriginAPI, StartedBy: "U0OTHER", Status: engine.StatusIdle})
		if resp, _ := c.slackSignIn("/sessions"); resp.StatusCode != http.StatusOK {
			t.Fatalf("sign-in: %d", resp.StatusCode)
		}
		resp, _ := c.get("/sessions/ses-other")
		if want := map[bool]int{true: http.StatusOK, false: http.StatusNotFound}[admins != nil]; resp.StatusCode != want {
			t.Errorf("admins %v: %d, want %d", admins, resp.StatusCode, want)
		}
	}
}
