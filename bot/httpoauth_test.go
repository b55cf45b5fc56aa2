package bot

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"brain/engine/model/fakemodel"
	"brain/internal/oauthclient/oauthtest"
	"brain/store"
)

// ticketAPI is an API protected by the fake authorization server: a
// request needs a live access token, whose subject it records; it echoes
// the Authorization header back, as careless APIs do, so a test can see
// the token never leaves the tool.
type ticketAPI struct {
	as  *oauthtest.Server
	srv *httptest.Server

	mu       sync.Mutex
	subjects []string
	refused  int
}

func newTicketAPI(t *testing.T) *ticketAPI {
	t.Helper()
	api := &ticketAPI{as: oauthtest.New()}
	t.Cleanup(api.as.Close)
	api.as.AddClient("brain-tickets", "tickets-client-secret")
	api.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		tok, _ := strings.CutPrefix(auth, "Bearer ")
		g, ok := api.as.Check(tok)
		api.mu.Lock()
		defer api.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			api.refused++
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"invalid_token","got":%q}`, auth)
			return
		}
		api.subjects = append(api.subjects, g.Subject)
		fmt.Fprintf(w, `{"created":true,"as":%q,"auth":%q}`, g.Subject, auth)
	}))
	t.Cleanup(api.srv.Close)
	return api
}

func (api *ticketAPI) refusals() int {
	api.mu.Lock()
	defer api.mu.Unlock()
	return api.refused
}

func (api *ticketAPI) calls() []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	return append([]string(nil), api.subjects...)
}

// ticketApp is a Slack app whose agent has the tools.http tool tickets
// with oauth (per, acts_as and an approval card as given).
func ticketApp(t *testing.T, api *ticketAPI, per, more, approvals, top string) *slackApp {
	t.Helper()
	cfg := fmt.Sprintf(`public_url: https://brain.invalid
secrets: {key_file: %s}
tools:
  http:
    - name: tickets
      description: Create a ticket in the tracker
      url: %s/tickets
      input: {type: object, properties: {title: {type: string}}}
      oauth:
        authorize_url: %s/authorize
        token_url: %s/token
        client_id: brain-tickets
        client_secret: tickets-client-secret
        scopes: [write]
        per: %s
%s%s`, writeKeyFile(t, genKey(t)), api.srv.URL, api.as.URL, api.as.URL, per, more, top)
	return newSlackAppConfig(t, "anthropic", "    tools: [ask, tickets]\n", "", approvals, cfg)
}

// connectTickets connects a person ("" = the workspace) to http:tickets
// through the API's connect link, as subject at the authorization server.
func connectTickets(t *testing.T, sa *slackApp, person, slackUser, subject string) {
	t.Helper()
	connectAs(t, sa, "http:tickets", person, slackUser, subject)
}

// connectAs makes person (unless "" = the workspace) with their Slack
// identity, and connects them to provider through the API's connect
// link, approving as subject at the authorization server.
func connectAs(t *testing.T, sa *slackApp, provider, person, slackUser, subject string) {
	t.Helper()
	if person != "" {
		sa.must(http.StatusOK, "POST", "/v1/people", map[string]string{"id": person, "name": person}, nil)
		sa.must(http.StatusOK, "POST", "/v1/people/"+person+"/identities", map[string]string{"surface": "slack", "external_id": slackUser}, nil)
	}
	var link struct{ URL string }
	sa.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": provider, "person": person}, &link)
	followFor(t, sa, provider, link.URL, subject)
}

// followFor runs a connect link to provider in a browser approving as
// subject, through brain's callback.
func followFor(t *testing.T, sa *slackApp, provider, url, subject string) {
	t.Helper()
	back, err := oauthtest.Follow(url, subject)
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := sa.do("GET", "/oauth/callback?"+back.Encode(), nil)
	if code != http.StatusOK || !strings.Contains(string(body), "Connected "+provider) {
		t.Fatalf("callback: %d %s", code, body)
	}
}

// connectionOf is the id of person's ("" = the workspace's) connection
// to provider, as GET /v1/connections lists it.
func connectionOf(t *testing.T, sa *slackApp, person, provider string) string {
	t.Helper()
	var list struct {
		Connections []struct {
			ID       string `json:"id"`
			Provider string `json:"provider"`
		} `json:"connections"`
	}
	sa.must(http.StatusOK, "GET", "/v1/connections?person="+person, nil, &list)
	for _, c := range list.Connections {
		if c.Provider == provider {
			return c.ID
		}
	}
	t.Fatalf("%q has no connection to %s: %+v", person, provider, list.Connections)
	return ""
}

// runSchedule runs a schedule now, waits for its turn and returns its
// session's tool results.
func runSchedule(t *testing.T, sa *slackApp, name string) []string {
	t.Helper()
	var run struct {
		SessionID string `json:"session_id"`
	}
	sa.must(http.StatusAccepted, "POST", "/v1/schedules/"+name+"/run", nil, &run)
	sa.waitTurns(run.SessionID, 1)
	return sa.toolResults(run.SessionID)
}

// noTokens fails if a token or client secret the authorization server
// handed out shows in the sessions' events, the logs or Slack.
func noTokens(t *testing.T, sa *slackApp, api *ticketAPI, sessions ...string) {
	t.Helper()
	var seen strings.Builder
	for _, id := range sessions {
		evs, err := sa.app.store.Events(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			seen.Write(ev.Data)
		}
	}
	seen.WriteString(sa.logs.String())
	for _, m := range append(sa.slack.Ephemerals(), sa.slack.Messages("C1")...) {
		seen.WriteString(m.Text + string(m.Blocks))
	}
	for _, s := range api.as.Secrets() {
		if strings.Contains(seen.String(), s) {
			t.Fatalf("a credential (%.6s…) shows in events, logs or Slack", s)
		}
	}
}

// TestHTTPOAuth_PerPersonBearer: a tools.http tool with oauth per:
// person sends the caller's own bearer token: Alice, not connected, gets
// a Connect button only she sees and nothing is sent; once connected,
// Retry sends her call with her token; Bob's calls carry Bob's, never
// hers; no token shows in events, logs or Slack.
func TestHTTPOAuth_PerPersonBearer(t *testing.T) {
	api := newTicketAPI(t)
	sa := ticketApp(t, api, "person", "", "{ttl: 1h}", "")
	connectTickets(t, sa, "bob", "UBOB", "bob")

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{"title":"printer"}`}), fakemodel.Text("Please connect first."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> file a ticket", "")
	sa.waitThread(root, "Please connect first.")
	s := sa.session(root)
	res := sa.toolResults(s.ID)
	if len(res) != 1 || !strings.Contains(res[0], "nothing was sent") || !strings.Contains(res[0], "sent them a link") {
		t.Fatalf("tool results %v: want the connection error, nothing sent, link sent", res)
	}
	if got := api.calls(); len(got) != 0 {
		t.Fatalf("the API got calls as %v before Alice connected", got)
	}
	m := sa.ephemeralTo("UALICE", "Connect http:tickets")
	for _, e := range sa.slack.Ephemerals() {
		if e.User != "UALICE" && strings.Contains(string(e.Blocks), "brain_connect") {
			t.Fatalf("a connect link went to %s", e.User)
		}
	}
	followFor(t, sa, "http:tickets", linkURL(t, m), "alice")
	notice := sa.waitThread(root, "connected *http:tickets*")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{"title":"printer"}`}), fakemodel.Text("Filed as alice."))
	sa.click("UALICE", notice, "brain_retry_call")
	sa.waitThread(root, "Filed as alice.")
	res = sa.toolResults(s.ID)
	if len(res) != 2 || !strings.Contains(res[1], `\"as\":\"alice\"`) || !strings.Contains(res[1], "[REDACTED]") {
		t.Fatalf("tool results %v: want the retried call as alice, the echoed token redacted", res)
	}

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{"title":"disk"}`}), fakemodel.Text("Filed as bob."))
	root2 := sa.message("Ev2", "app_mention", "UBOB", "<@UBOT> file one", "")
	sa.waitThread(root2, "Filed as bob.")
	if got := api.calls(); strings.Join(got, ",") != "alice,bob" {
		t.Fatalf("the API saw %v, want alice then bob", got)
	}
	noTokens(t, sa, api, s.ID, sa.session(root2).ID)

	// Alice revokes brain's access at the provider: her next call's 401
	// leads to a refused refresh, her connection is revoked, and she gets
	// a connect link again; the request is not sent a second time.
	api.as.RevokeSubject("alice")
	api.as.ExpireAccess()
	links := 0
	for _, e := range sa.slack.Ephemerals() {
		if e.User == "UALICE" && strings.Contains(string(e.Blocks), "brain_connect") {
			links++
		}
	}
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Connect again."))
	sa.message("Ev3", "message", "UALICE", "one more", root)
	sa.waitThread(root, "Connect again.")
	if res := sa.toolResults(s.ID); len(res) != 3 || !strings.Contains(res[2], "sent them a link") {
		t.Fatalf("tool results %v: want a connect link after the revocation", res)
	}
	again := 0
	for _, e := range sa.slack.Ephemerals() {
		if e.User == "UALICE" && strings.Contains(string(e.Blocks), "brain_connect") {
			again++
		}
	}
	if again != links+1 || api.refusals() != 1 {
		t.Fatalf("%d new links, %d refused requests; want one each", again-links, api.refusals())
	}
}

// TestHTTPOAuth_WorkspaceRefreshOn401: per: workspace uses the one
// connection an admin made; without it the model is told an admin must
// connect it (nothing sent). A token the API stops accepting is
// refreshed once and the request sent once more.
func TestHTTPOAuth_WorkspaceRefreshOn401(t *testing.T) {
	api := newTicketAPI(t)
	sa := ticketApp(t, api, "workspace", "", "{ttl: 1h}", "")

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Not connected."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> file a ticket", "")
	sa.waitThread(root, "Not connected.")
	s := sa.session(root)
	if res := sa.toolResults(s.ID); len(res) != 1 || !strings.Contains(res[0], "the workspace has no usable connection") ||
		!strings.Contains(res[0], "nothing was sent") {
		t.Fatalf("tool results %v", res)
	}

	connectTickets(t, sa, "", "", "ops-bot")
	// The workspace's own connection is the app's: schedules use it already.
	sa.must(http.StatusBadRequest, "POST", "/v1/connections/"+connectionOf(t, sa, "", "http:tickets")+"/service-account",
		map[string]bool{"enabled": true}, nil)
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Filed."))
	sa.message("Ev2", "message", "UALICE", "again please", root)
	sa.waitThread(root, "Filed.")
	api.as.ExpireAccess()
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Filed again."))
	sa.message("Ev3", "message", "UBOB", "and another", root)
	sa.waitThread(root, "Filed again.")
	if got := api.calls(); strings.Join(got, ",") != "ops-bot,ops-bot" {
		t.Fatalf("the API saw %v, want the workspace's account twice", got)
	}
	if api.as.Refreshes() != 1 || api.refusals() != 1 {
		t.Fatalf("%d refreshes, %d refused requests; want one each", api.as.Refreshes(), api.refusals())
	}
	res := sa.toolResults(s.ID)
	if len(res) != 3 || !strings.Contains(res[2], `\"as\":\"ops-bot\"`) || !strings.Contains(res[2], "[REDACTED]") {
		t.Fatalf("tool results %v", res)
	}
	noTokens(t, sa, api, s.ID)

	// Revoked upstream: the refresh is refused, the connection revoked,
	// and the model told an admin must connect again.
	api.as.RevokeSubject("ops-bot")
	api.as.ExpireAccess()
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Revoked."))
	sa.message("Ev4", "message", "UALICE", "one more", root)
	sa.waitThread(root, "Revoked.")
	if res := sa.toolResults(s.ID); len(res) != 4 || !strings.Contains(res[3], "no usable connection") ||
		!strings.Contains(res[3], "refused the request (HTTP 401)") || !strings.Contains(res[3], "refused the refresh token") {
		t.Fatalf("tool results %v", res)
	}
	var conns struct {
		Connections []struct {
			Status string `json:"status"`
		} `json:"connections"`
	}
	sa.must(http.StatusOK, "GET", "/v1/connections?person=", nil, &conns)
	if len(conns.Connections) != 1 || conns.Connections[0].Status != "revoked" {
		t.Fatalf("after a refused refresh the connection is %+v, want revoked", conns.Connections)
	}
	if api.refusals() != 2 {
		t.Fatalf("%d refused requests, want 2 (no retry without a fresh token)", api.refusals())
	}
}

// TestHTTPOAuth_RefreshBeforeExpiry: a token that expires within the
// refresh margin is refreshed before the request, which then goes out
// once, with the fresh token.
func TestHTTPOAuth_RefreshBeforeExpiry(t *testing.T) {
	api := newTicketAPI(t)
	api.as.ExpiresIn = 60 // well inside the five-minute margin
	sa := ticketApp(t, api, "person", "", "{ttl: 1h}", "")
	connectTickets(t, sa, "alice", "UALICE", "alice")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Filed."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> file a ticket", "")
	sa.waitThread(root, "Filed.")
	if api.as.Refreshes() != 1 || api.refusals() != 0 || strings.Join(api.calls(), ",") != "alice" {
		t.Fatalf("%d refreshes, %d refused, calls %v; want one refresh before one accepted call",
			api.as.Refreshes(), api.refusals(), api.calls())
	}
	noTokens(t, sa, api, sa.session(root).ID)
}

// TestHTTPOAuth_ActsAsApprover: an approval tool with acts_as: approver
// sends the apply with the token of the person whose vote decided it.
func TestHTTPOAuth_ActsAsApprover(t *testing.T) {
	api := newTicketAPI(t)
	sa := ticketApp(t, api, "person", "      acts_as: approver\n      approval: {title: \"Create ticket {{.title}}\"}\n",
		"{ttl: 1h, approvers: [UALICE, UBOB]}", "")
	connectTickets(t, sa, "alice", "UALICE", "alice")
	connectTickets(t, sa, "bob", "UBOB", "bob")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{"title":"printer"}`}), fakemodel.Text("Proposed."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> file a ticket", "")
	card := sa.waitThread(root, "brain_approve")
	sa.click("UBOB", card, "brain_approve")
	sa.waitThread(root, "Create ticket printer")
	waitFor(t, "the approved call to reach the API", func() bool { return len(api.calls()) > 0 })
	if got := api.calls(); strings.Join(got, ",") != "bob" {
		t.Fatalf("the API saw %v, want bob (the approver)", got)
	}
}

// TestHTTPOAuth_ScheduleServiceAccount: a schedule's call to a per-person
// tool is refused (nothing sent, saying how to mark a service account)
// until an admin marks a connection as the service account; then it is
// sent with that connection's token. The mark is audited, one per
// provider, and not for the workspace's own connection.
func TestHTTPOAuth_ScheduleServiceAccount(t *testing.T) {
	api := newTicketAPI(t)
	sa := ticketApp(t, api, "person", "", "{ttl: 1h}", `schedules:
  - name: nightly
    cron: "0 3 * * *"
    agent: default
    prompt: "file the nightly ticket"
`)
	connectTickets(t, sa, "bob", "UBOB", "bob")
	connectTickets(t, sa, "carol", "UCAROL", "carol")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Could not."))
	res := runSchedule(t, sa, "nightly")
	if len(res) != 1 || !strings.Contains(res[0], "schedules never use a person's connection") ||
		!strings.Contains(res[0], "service-account") || !strings.Contains(res[0], "nothing was sent") {
		t.Fatalf("tool results %v: want the schedule refusal saying how to mark one", res)
	}
	if got := api.calls(); len(got) != 0 {
		t.Fatalf("a schedule's call reached the API as %v", got)
	}

	ids := map[string]string{"bob": connectionOf(t, sa, "bob", "http:tickets"), "carol": connectionOf(t, sa, "carol", "http:tickets")}
	var marked struct {
		ServiceAccount bool `json:"service_account"`
	}
	sa.must(http.StatusOK, "POST", "/v1/connections/"+ids["bob"]+"/service-account", map[string]bool{"enabled": true}, &marked)
	if !marked.ServiceAccount {
		t.Fatal("the connection is not marked")
	}
	sa.must(http.StatusConflict, "POST", "/v1/connections/"+ids["carol"]+"/service-account", map[string]bool{"enabled": true}, nil)
	sa.must(http.StatusBadRequest, "POST", "/v1/connections/"+ids["carol"]+"/service-account", map[string]any{}, nil)
	audit, err := sa.app.store.AuditEntries(context.Background(), store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range audit {
		if e.Action == "connection.service_account" && e.Target == ids["bob"] {
			found = true
		}
	}
	if !found {
		t.Fatalf("no audit entry for the mark: %+v", audit)
	}

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Filed."))
	if res := runSchedule(t, sa, "nightly"); len(res) != 1 || !strings.Contains(res[0], `\"as\":\"bob\"`) {
		t.Fatalf("tool results %v: want the call as bob, the service account", res)
	}
	if got := api.calls(); strings.Join(got, ",") != "bob" {
		t.Fatalf("the API saw %v, want bob", got)
	}
	// Unmarked: refused again.
	sa.must(http.StatusOK, "POST", "/v1/connections/"+ids["bob"]+"/service-account", map[string]bool{"enabled": false}, nil)
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tickets", Input: `{}`}), fakemodel.Text("Could not."))
	if res := runSchedule(t, sa, "nightly"); len(res) != 1 || !strings.Contains(res[0], "schedules never use") {
		t.Fatalf("tool results %v after unmarking", res)
	}
	if got := api.calls(); len(got) != 1 {
		t.Fatalf("the API saw %v after unmarking", got)
	}
}
