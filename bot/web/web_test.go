package web

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"brain/bot/config"
	"brain/channels/slack"
	"brain/engine"
	"brain/tools"
)

const testKey = "k-secret-console-key"

// console is a console on an httptest server with a browser-like client:
// a cookie jar, and redirects not followed so tests see them.
type console struct {
	t      *testing.T
	s      *Server
	eng    *fakeEngine
	sched  *fakeSchedules
	srv    *httptest.Server
	client *http.Client
}

func newConsole(t *testing.T, cfg Config) *console {
	t.Helper()
	c := &console{t: t, eng: newFakeEngine(), sched: &fakeSchedules{}}
	if cfg.Engine == nil {
		cfg.Engine = c.eng
	}
	cfg.Schedules = c.sched
	if cfg.Agents == nil {
		cfg.Agents, cfg.DefaultAgent = []string{"default"}, "default"
	}
	done := make(chan struct{})
	cfg.Done = done
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.s = s
	c.srv = httptest.NewServer(s.Handler())
	t.Cleanup(func() { close(done); c.srv.Close() })
	jar, _ := cookiejar.New(nil)
	c.client = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c
}

func (c *console) get(path string, hdr ...string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.srv.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.do(req)
}

func (c *console) post(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *console) do(req *http.Request) (*http.Response, string) {
	c.t.Helper()
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var reCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token from a page's forms.
func (c *console) csrf(page string) string {
	c.t.Helper()
	m := reCSRF.FindStringSubmatch(page)
	if m == nil {
		c.t.Fatalf("no csrf token in page:\n%s", page)
	}
	return m[1]
}

// signIn signs in with key through the sign-in form.
func (c *console) signIn(key string) *http.Response {
	c.t.Helper()
	_, page := c.get("/login")
	resp, _ := c.post("/login", url.Values{"csrf": {c.csrf(page)}, "key": {key}, "next": {"/sessions"}})
	return resp
}

func keyed() Config {
	return Config{APIKeys: []config.APIKey{{Name: "ops", Key: testKey}}}
}

func TestConsole_SignInWithKey(t *testing.T) {
	c := newConsole(t, keyed())
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusIdle, StartedBy: "ops"})

	resp, _ := c.get("/sessions")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fsessions" {
		t.Fatalf("signed out: %d %s, want a redirect to the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := c.signIn("wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %d", resp.StatusCode)
	}
	guest := cookieOf(t, c, cookieName)
	resp = c.signIn(testKey)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	var set *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == cookieName {
			set = ck
		}
	}
	if set == nil || !set.HttpOnly || set.SameSite != http.SameSiteStrictMode || set.Value == guest || set.Expires.IsZero() {
		t.Fatalf("session cookie %+v: want a new HttpOnly SameSite=Strict cookie with an expiry", set)
	}
	resp, page := c.get("/sessions")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `href="/sessions/ses1"`) || !strings.Contains(page, "ops") {
		t.Fatalf("sessions list: %d\n%s", resp.StatusCode, page)
	}
	// Logging out revokes the server-side session: the old cookie no
	// longer lets anyone in.
	resp, _ = c.post("/logout", url.Values{"csrf": {c.csrf(page)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", c.srv.URL+"/sessions", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: set.Value})
	if resp, _ := (&http.Client{CheckRedirect: c.client.CheckRedirect}).Do(req); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a logged-out cookie still works: %d", resp.StatusCode)
	}
}

func cookieOf(t *testing.T, c *console, name string) string {
	t.Helper()
	u, _ := url.Parse(c.srv.URL)
	for _, ck := range c.client.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

func TestConsole_SessionExpires(t *testing.T) {
	now := time.Now() // the cookie jar drops cookies past their expiry
	cfg := keyed()
	cfg.Clock = func() time.Time { return now }
	cfg.SessionTTL = time.Hour
	c := newConsole(t, cfg)
	c.signIn(testKey)
	if resp, _ := c.get("/status"); resp.StatusCode != http.StatusOK {
		t.Fatalf("status page: %d", resp.StatusCode)
	}
	now = now.Add(time.Hour)
	if resp, _ := c.get("/status"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the ttl: %d, want the sign-in page", resp.StatusCode)
	}
}

func TestConsole_OpenOnLoopbackWithoutKeys(t *testing.T) {
	c := newConsole(t, Config{})
	if resp, page := c.get("/"); resp.StatusCode != http.StatusOK || !strings.Contains(page, "this host") {
		t.Fatalf("open console: %d\n%s", resp.StatusCode, page)
	}
	// A request a proxy relayed is not from this host.
	if resp, _ := c.get("/", "X-Forwarded-For", "203.0.113.9"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("proxied request to an open console: %d, want the sign-in page", resp.StatusCode)
	}
}

func TestConsole_FormWithoutCSRFRefused(t *testing.T) {
	c := newConsole(t, keyed())
	c.eng.addSession(engine.Session{ID: "ses1", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	c.eng.approvals["apr1"] = engine.Approval{ID: "apr1", SessionID: "ses1", Status: engine.ApprovalPending, Card: tools.Card{Title: "Create ticket"}}
	c.signIn(testKey)
	_, page := c.get("/approvals")
	token := c.csrf(page)
	for name, form := range map[string]url.Values{
		"no token":    {"decision": {"approve"}},
		"wrong token": {"decision": {"approve"}, "csrf": {strings.Repeat("0", len(token))}},
	} {
		if resp, body := c.post("/approvals/apr1/decision", form); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("%s: %d %s", name, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("POST", c.srv.URL+"/approvals/apr1/decision", strings.NewReader(url.Values{"decision": {"approve"}, "csrf": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	if resp, _ := c.do(req); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin post: %d", resp.StatusCode)
	}
	if len(c.eng.decisions) != 0 {
		t.Fatalf("refused forms reached the engine: %+v", c.eng.decisions)
	}
	resp, _ := c.post("/approvals/apr1/decision", url.Values{"decision": {"deny"}, "csrf": {token}, "comment": {"not now"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("decision with the token: %d", resp.StatusCode)
	}
	if d := c.eng.decisions; len(d) != 1 || d[0].Approve || d[0].By != "ops" || !d[0].ViaAPI || d[0].Comment != "not now" {
		t.Fatalf("decisions %+v: want one denial by the key ops, via a key, with the reason", d)
	}
	// Single use: the second decision is refused with who decided.
	if resp, body := c.post("/approvals/apr1/decision", url.Values{"decision": {"approve"}, "csrf": {token}}); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "already decided by ops") {
		t.Fatalf("second decision: %d %s", resp.StatusCode, body)
	}
}

func TestConsole_SecurityHeaders(t *testing.T) {
	c := newConsole(t, Config{})
	for _, path := range []string{"/", "/login", "/approvals", "/schedules", "/status", "/static/console.js"} {
		resp, body := c.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", path, resp.StatusCode)
			continue
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if strings.HasSuffix(path, ".js") {
			continue
		}
		// Only external scripts: no inline code the CSP would have to allow.
		for _, m := range regexp.MustCompile(`<script[^>]*>`).FindAllString(body, -1) {
			if !strings.Contains(m, `src="/static/`) {
				t.Errorf("%s: inline script %s", path, m)
			}
		}
		if regexp.MustCompile(`\son[a-z]+=`).MatchString(body) {
			t.Errorf("%s: an inline event handler", path)
		}
	}
}

func TestConsole_SessionPageShowsTheTimelineSafely(t *testing.T) {
	c := newConsole(t, Config{})
	q := engine.Question{ID: "q1", Text: "Which **one**?", Options: []engine.Option{{Label: "A", Value: "a"}}}
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusAwaitingInput, Interactive: true, Question: mustJSON(q)})
	c.eng.appendEvent(t, "ses1", engine.Input{Text: "hello <script>alert(1)</script> ![x](https://evil.example/x.png) [click](javascript:alert(2)) <img src=x onerror=alert(3)>", Author: "ops"})
	c.eng.appendEvent(t, "ses1", engine.ToolCall{ID: "c1", Name: "create_ticket", Input: json.RawMessage(`{"title":"<b>T</b>"}`)})
	c.eng.appendEvent(t, "ses1", engine.ToolCallResult{CallID: "c1", Name: "create_ticket", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: "boom"}}, IsError: true, UnknownOutcome: true}})
	c.eng.appendEvent(t, "ses1", engine.SessionError{Code: "model_timeout", Message: "the model timed out"})
	c.eng.appendEvent(t, "ses1", q)
	c.eng.appendEvent(t, "ses1", engine.TurnCompleted{Outcome: engine.OutcomeQuestion, Rounds: 2, Usage: engine.Usage{InputTokens: 120, OutputTokens: 30}})
	resp, page := c.get("/sessions/ses1?view=raw")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d\n%s", resp.StatusCode, page)
	}
	// The text is there, escaped; nothing of it is markup.
	for _, bad := range []string{"<script>alert", `href="javascript`, "<img", `src="https://evil`, "<b>T</b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	for _, want := range []string{"create_ticket failed (outcome unknown)", "error model_timeout", "<strong>one</strong>", `name="question_id" value="q1"`, "120 in / 30 out", "<details>", `data-live="/sessions/ses1/live?after=6"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	resp, _ = c.post("/sessions/ses1/messages", url.Values{"csrf": {c.csrf(page)}, "question_id": {"q1"}, "value": {"a"}})
	if resp.StatusCode != http.StatusSeeOther || len(c.eng.sent) != 1 || c.eng.sent[0].Answer == nil || c.eng.sent[0].Answer.Value != "a" {
		t.Fatalf("answer: %d %+v", resp.StatusCode, c.eng.sent)
	}
}

func TestConsole_SchedulesRunNow(t *testing.T) {
	c := newConsole(t, Config{})
	_, page := c.get("/schedules")
	for _, want := range []string{"digest", "Posted the digest.", `href="/sessions/ses-sched"`, "2026-12-01 10:00:00 UTC"} {
		if !strings.Contains(page, want) {
			t.Errorf("schedules page lacks %q", want)
		}
	}
	resp, _ := c.post("/schedules/digest/run", url.Values{"csrf": {c.csrf(page)}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sessions/ses-run" || len(c.sched.runs) != 1 {
		t.Fatalf("run now: %d %s %v", resp.StatusCode, resp.Header.Get("Location"), c.sched.runs)
	}
}

func TestConsole_StartSessionAndActions(t *testing.T) {
	c := newConsole(t, keyed())
	c.signIn(testKey)
	_, page := c.get("/sessions")
	idem := regexp.MustCompile(`name="idem" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if idem == nil {
		t.Fatal("the start form has no idempotency key")
	}
	resp, _ := c.post("/sessions", url.Values{"csrf": {c.csrf(page)}, "idem": {idem[1]}, "agent": {"default"}, "text": {"  hello there  "}})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/sessions/ses") {
		t.Fatalf("start: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if s := c.eng.sent; len(s) != 1 || s[0].Text != "hello there" || s[0].Author != "ops" || s[0].IdempotencyKey != "console:"+idem[1] {
		t.Fatalf("first message %+v", s)
	}
	ss := c.eng.sessions[0]
	if ss.Origin != engine.OriginConsole || ss.StartedBy != "ops" || !ss.Interactive {
		t.Fatalf("session %+v", ss)
	}
	if resp, body := c.post("/sessions", url.Values{"csrf": {c.csrf(page)}, "text": {strings.Repeat("x", maxMessage+1)}}); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an oversized message: %d %s", resp.StatusCode, body)
	}

	c.eng.addSession(engine.Session{ID: "slk", Origin: engine.OriginSlack, Status: engine.StatusInterrupted})
	_, page = c.get("/sessions/slk")
	if strings.Contains(page, `action="/sessions/slk/messages"`) || !strings.Contains(page, `action="/sessions/slk/resume"`) {
		t.Fatal("a Slack session's page offers sending (it lives in Slack) or lacks Resume")
	}
	if resp, _ := c.post("/sessions/slk/messages", url.Values{"csrf": {c.csrf(page)}, "text": {"hi"}}); resp.StatusCode != http.StatusConflict {
		t.Fatalf("message to a Slack session: %d", resp.StatusCode)
	}
	if resp, _ := c.post("/sessions/slk/resume", url.Values{"csrf": {c.csrf(page)}, "retry": {"1"}}); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "notice=resumed") {
		t.Fatalf("resume: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := c.get("/sessions/nope"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: %d", resp.StatusCode)
	}
}

func TestConsole_SessionsFilters(t *testing.T) {
	slackLink := func(ss engine.Session) string {
		if th, ok := slack.ParseThread(ss.ThreadKey); ok {
			return th.URL()
		}
		return ""
	}
	c := newConsole(t, Config{Agents: []string{"default", "triage"}, DefaultAgent: "default",
		Origins: []Origin{{Name: string(engine.OriginSlack), Link: slackLink}, {Name: string(engine.OriginLinear)}}})
	for i, o := range []engine.Origin{engine.OriginSlack, engine.OriginAPI, engine.OriginSlack} {
		c.eng.addSession(engine.Session{ID: "s" + strconv.Itoa(i), Agent: []string{"default", "triage", "triage"}[i], Origin: o, Status: engine.StatusIdle,
			ThreadKey: "slack:T1:C1:1700000000.0001"})
	}
	_, page := c.get("/sessions?origin=slack&agent=triage")
	if !strings.Contains(page, `href="/sessions/s2"`) || strings.Contains(page, `href="/sessions/s0"`) || strings.Contains(page, `href="/sessions/s1"`) {
		t.Fatalf("filtered list:\n%s", page)
	}
	if !strings.Contains(page, `href="https://app.slack.com/client/T1/C1/thread/C1-1700000000.0001"`) {
		t.Fatal("no link to the Slack thread")
	}
	if resp, _ := c.get("/sessions?status=bogus"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad status filter: %d", resp.StatusCode)
	}
	for i := 3; i < 3+pageSize+2; i++ {
		c.eng.addSession(engine.Session{ID: "s" + strconv.Itoa(i), Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	}
	_, page = c.get("/sessions")
	if !strings.Contains(page, "older →") || strings.Contains(page, `href="/sessions/s0"`) {
		t.Fatal("the first page is not paged")
	}
	older := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(page)
	if older == nil {
		t.Fatal("no link to the older page")
	}
	_, page = c.get(html.UnescapeString(older[1]))
	if !strings.Contains(page, `href="/sessions/s0"`) || !strings.Contains(page, "← newest") {
		t.Fatal("the second page lacks the oldest session")
	}
}
