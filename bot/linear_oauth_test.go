package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brain/channels/linear/linearfake"
	"brain/engine/model/fakemodel"
	"brain/store"
	"brain/webhooks/linearhook"
)

const (
	oauthPublicURL = "https://brain.example.com"
	oauthClientID  = "client-1"
	oauthSecret    = "oauth-client-secret-1"
)

// manualClock is a clock the test moves; brain and the fake share it.
type manualClock struct{ ns atomic.Int64 }

func (c *manualClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *manualClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

type oauthApp struct {
	*testApp
	linear *linearfake.Server
	clock  *manualClock
	seq    atomic.Int64
}

// newOAuthApp runs brain as a Linear OAuth app against the fake, whose
// access tokens live an hour; workspaces org-a and org-b exist.
func newOAuthApp(t *testing.T) *oauthApp {
	t.Helper()
	return newOAuthAppWith(t, "")
}

// newOAuthAppWith is newOAuthApp with more top-level config; lines
// indented by four spaces at its start continue the default agent.
func newOAuthAppWith(t *testing.T, more string) *oauthApp {
	t.Helper()
	agent := ""
	for strings.HasPrefix(more, "    ") {
		line, rest, _ := strings.Cut(more, "\n")
		agent, more = agent+line+"\n", rest
	}
	oa := &oauthApp{linear: linearfake.New(""), clock: &manualClock{}}
	oa.clock.ns.Store(time.Now().UnixNano())
	t.Cleanup(oa.linear.Close)
	oa.linear.EnableOAuth(oauthClientID, oauthSecret, time.Hour)
	oa.linear.SetClock(oa.clock.Now)
	oa.linear.AddOrganization(linearfake.Organization{ID: "org-a", Name: "Acme", URLKey: "acme", AppUserID: "app-a", AppName: "brain"})
	oa.linear.AddOrganization(linearfake.Organization{ID: "org-b", Name: "Bolt", URLKey: "bolt", AppUserID: "app-b", AppName: "brain"})
	extra := fmt.Sprintf("public_url: %s\nlinear:\n  webhook_secret: %s\n  client_id: %s\n  client_secret: %s\n  api_url: %s\n  authorize_url: %s\n  token_url: %s\n",
		oauthPublicURL, linearSecret, oauthClientID, oauthSecret, oa.linear.URL(), oa.linear.AuthorizeURL(), oa.linear.TokenURL())
	oa.testApp = newTestApp(t, agent+extra+more, Options{Clock: oa.clock.Now})
	return oa
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := noFollow.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// startInstall opens the install link and Linear's consent page as a
// browser would, and returns the callback URL Linear sends it back to
// (on this test's brain rather than public_url).
func (oa *oauthApp) startInstall(org string) string {
	t := oa.t.(*testing.T)
	t.Helper()
	oa.linear.SetInstallOrganization(org)
	resp, _ := get(t, oa.base+"/linear/oauth/install")
	authorize, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(authorize.String(), oa.linear.AuthorizeURL()+"?") {
		t.Fatalf("install answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	q := authorize.Query()
	want := map[string]string{
		"client_id": oauthClientID, "redirect_uri": oauthPublicURL + "/linear/oauth/callback", "response_type": "code",
		"scope": "read,write,app:assignable,app:mentionable", "actor": "app",
	}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("authorize %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if len(q.Get("state")) < 32 {
		t.Errorf("state %q is too short to be unguessable", q.Get("state"))
	}
	resp, _ = get(t, authorize.String())
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(back, oauthPublicURL+"/linear/oauth/callback?") {
		t.Fatalf("consent answered %d %q", resp.StatusCode, back)
	}
	return oa.base + strings.TrimPrefix(back, oauthPublicURL)
}

// install connects a workspace end to end.
func (oa *oauthApp) install(org string) {
	t := oa.t.(*testing.T)
	t.Helper()
	resp, body := get(t, oa.startInstall(org))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "connected to the Linear workspace") {
		t.Fatalf("callback answered %d: %s", resp.StatusCode, body)
	}
}

// event posts a signed AgentSessionEvent of workspace org for agent
// session sid, timestamped by the shared clock.
func (oa *oauthApp) event(org, action, sid, body string) int {
	oa.t.Helper()
	return oa.eventWith(org, action, sid, body, nil)
}

// eventWith is event with more top-level payload fields.
func (oa *oauthApp) eventWith(org, action, sid, body string, more map[string]any) int {
	oa.t.Helper()
	n := oa.seq.Add(1)
	ev := map[string]any{
		"type": "AgentSessionEvent", "action": action, "organizationId": org, "webhookTimestamp": oa.clock.Now().UnixMilli(),
		"agentSession": map[string]any{
			"id": sid, "creatorId": linearUser, "creator": map[string]any{"id": linearUser, "name": "Ann"},
			"comment": map[string]any{"id": "c-1", "body": body, "userId": linearUser},
			"issue":   map[string]any{"id": "i-1", "identifier": "ENG-1", "title": "Fix checkout", "url": "https://linear.app/x/issue/ENG-1"},
		},
	}
	if action == "created" {
		ev["promptContext"] = "<issue identifier=\"ENG-1\"><title>Fix checkout</title></issue>\n" + body
	}
	for k, v := range more {
		ev[k] = v
	}
	if action == "prompted" {
		ev["agentActivity"] = map[string]any{"id": fmt.Sprintf("a1b2c3d4-0000-4000-8000-%012d", n), "agentSessionId": sid, "userId": linearUser,
			"content": map[string]any{"type": "prompt", "body": body}}
	}
	raw, _ := json.Marshal(ev)
	req, _ := http.NewRequest("POST", oa.base+"/linear/webhook", bytes.NewReader(raw))
	req.Header.Set(linearhook.HeaderSignature, linearhook.Signature(linearSecret, raw))
	req.Header.Set(linearhook.HeaderDelivery, fmt.Sprintf("d0e1f2a3-0000-4000-8000-%012d", n))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		oa.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (oa *oauthApp) waitActivity(sid, typ, want string) linearfake.Activity {
	oa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, a := range oa.linear.Activities(sid) {
			if a.Type == typ && strings.Contains(a.Body+a.Result, want) {
				return a
			}
		}
		if time.Now().After(deadline) {
			oa.t.Fatalf("no %s activity with %q in %+v", typ, want, oa.linear.Activities(sid))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (oa *oauthApp) token(org string) store.LinearToken {
	oa.t.Helper()
	tok, err := oa.app.store.LinearToken(context.Background(), org)
	if err != nil {
		oa.t.Fatalf("LinearToken(%s): %v", org, err)
	}
	return tok
}

func (oa *oauthApp) status() string {
	oa.t.Helper()
	var b bytes.Buffer
	ins := &Inspector{store: oa.app.store}
	if err := ins.LinearStatus(context.Background(), oa.app.cfg, oa.clock.Now(), &b); err != nil {
		oa.t.Fatal(err)
	}
	return b.String()
}

// noSecretsLogged fails when a token or the client secret is in the logs.
func (oa *oauthApp) noSecretsLogged(toks ...store.LinearToken) {
	oa.t.Helper()
	logs := oa.logs.String()
	secrets := []string{oauthSecret}
	for _, t := range toks {
		secrets = append(secrets, t.AccessToken, t.RefreshToken)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			oa.t.Fatalf("a secret is in the logs:\n%s", logs)
		}
	}
}

func TestLinearOAuth_InstallEndToEnd(t *testing.T) {
	oa := newOAuthApp(t)
	if !strings.Contains(oa.status(), "No Linear workspace has installed the app yet: open "+oauthPublicURL+"/linear/oauth/install") {
		t.Fatalf("status before install:\n%s", oa.status())
	}
	callback := oa.startInstall("org-a")
	resp, body := get(t, callback)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Acme (acme)") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("callback %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	tok := oa.token("org-a")
	if tok.OrganizationName != "Acme" || tok.AppUserID != "app-a" || tok.Status != store.LinearConnected ||
		tok.AccessToken == "" || tok.RefreshToken == "" || !tok.ExpiresAt.Equal(oa.clock.Now().Add(time.Hour)) {
		t.Fatalf("stored %+v", tok)
	}
	if st := oa.status(); !strings.Contains(st, "Acme (acme)") || !strings.Contains(st, "connected") || !strings.Contains(st, "(in 1h0m0s)") ||
		strings.Contains(st, tok.AccessToken) {
		t.Fatalf("status:\n%s", st)
	}

	// A replayed callback, a forged state, a denied consent: a clear page,
	// nothing stored.
	resp, body = get(t, callback)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "expired or already used") {
		t.Fatalf("replayed callback %d: %s", resp.StatusCode, body)
	}
	resp, body = get(t, oa.base+"/linear/oauth/callback?code=code-1&state=forged")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Start again at "+oauthPublicURL+"/linear/oauth/install") {
		t.Fatalf("forged state %d: %s", resp.StatusCode, body)
	}
	oa.linear.DenyConsent(true)
	resp, body = get(t, oa.startInstall("org-b"))
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "access_denied") {
		t.Fatalf("denied consent %d: %s", resp.StatusCode, body)
	}
	if _, err := oa.app.store.LinearToken(context.Background(), "org-b"); err == nil {
		t.Fatal("a denied install stored a token")
	}
	oa.noSecretsLogged(tok)
}

func TestLinearOAuth_SessionAcrossThreeExpiries(t *testing.T) {
	oa := newOAuthApp(t)
	oa.install("org-a")
	first := oa.token("org-a")
	oa.fake.Push(fakemodel.Text("Reply 0."), fakemodel.Text("Reply 1."), fakemodel.Text("Reply 2."), fakemodel.Text("Reply 3."))
	if st := oa.event("org-a", "created", sidA, "@brain fix it"); st != 200 {
		t.Fatalf("status %d", st)
	}
	oa.waitActivity(sidA, "response", "Reply 0.")
	for i := 1; i <= 3; i++ {
		oa.clock.Advance(time.Hour + time.Minute) // the access token expired
		if st := oa.event("org-a", "prompted", sidA, fmt.Sprintf("more %d", i)); st != 200 {
			t.Fatalf("status %d", st)
		}
		oa.waitActivity(sidA, "response", fmt.Sprintf("Reply %d.", i))
	}
	if n := oa.linear.Refreshes("org-a"); n != 3 {
		t.Fatalf("%d refreshes over three expiries, want 3", n)
	}
	for _, r := range oa.linear.Requests() {
		if r.Status != http.StatusOK {
			t.Errorf("a request was refused (%d %s): brain used an expired token", r.Status, r.ErrorCode)
		}
	}
	oa.noSecretsLogged(first, oa.token("org-a"))
}

func TestLinearOAuth_RevokedKeepsWebhooksUntilReinstall(t *testing.T) {
	oa := newOAuthApp(t)
	oa.install("org-a")
	revoked := oa.token("org-a")
	oa.linear.RevokeTokens("org-a")
	oa.clock.Advance(2 * time.Hour)
	oa.fake.Push(fakemodel.Text("First one."))
	// A created whose acknowledgement finds the refresh token refused.
	if st := oa.event("org-a", "created", sidA, "@brain fix it"); st != 200 {
		t.Fatalf("status %d", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for oa.token("org-a").Status != store.LinearRevoked {
		if time.Now().After(deadline) {
			t.Fatal("the workspace never showed as revoked")
		}
		time.Sleep(10 * time.Millisecond)
	}
	const later = "6ba7b810-9dad-41d1-80b4-00c04fd430c8"
	if st := oa.event("org-a", "created", later, "@brain and this"); st != 200 {
		t.Fatalf("status %d: webhooks of a disconnected workspace are still recorded", st)
	}
	if st := oa.status(); !strings.Contains(st, "revoked") || !strings.Contains(st, "install the app again at "+oauthPublicURL+"/linear/oauth/install") {
		t.Fatalf("status:\n%s", st)
	}
	if n := strings.Count(oa.logs.String(), "Linear refused to refresh"); n != 1 {
		t.Fatalf("the refusal was logged %d times, want once:\n%s", n, oa.logs.String())
	}
	if n := len(oa.fake.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times while the workspace was disconnected", n)
	}
	// Reinstalling runs what was kept (the two turns run side by side, so
	// either may get either answer).
	oa.fake.Push(fakemodel.Text("Second one."))
	oa.install("org-a")
	oa.waitActivity(sidA, "response", " one.")
	oa.waitActivity(later, "response", " one.")
	oa.noSecretsLogged(revoked, oa.token("org-a"))
}

func TestLinearOAuth_TwoWorkspacesUseTheirOwnTokens(t *testing.T) {
	oa := newOAuthApp(t)
	oa.install("org-a")
	oa.install("org-b")
	const sidB = "0f0e0d0c-0b0a-4908-8706-050403020100"
	oa.fake.Push(fakemodel.Text("Answer."), fakemodel.Text("Answer."))
	oa.event("org-a", "created", sidA, "@brain one")
	oa.waitActivity(sidA, "response", "Answer.")
	oa.event("org-b", "created", sidB, "@brain two")
	oa.waitActivity(sidB, "response", "Answer.")
	for _, r := range oa.linear.Requests() {
		var v struct {
			Input struct {
				AgentSessionID string `json:"agentSessionId"`
			} `json:"input"`
		}
		_ = json.Unmarshal(r.Variables, &v)
		want := map[string]string{sidA: "org-a", sidB: "org-b"}[v.Input.AgentSessionID]
		if want != "" && r.Organization != want {
			t.Errorf("activity of %s sent with %q's token, want %s", v.Input.AgentSessionID, r.Organization, want)
		}
	}
	if st := oa.status(); !strings.Contains(st, "Acme (acme)") || !strings.Contains(st, "Bolt (bolt)") {
		t.Fatalf("status:\n%s", st)
	}
}
