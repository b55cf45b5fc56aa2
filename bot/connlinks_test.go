package bot

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"brain/engine/model/fakemodel"
	"brain/internal/oauthclient/oauthtest"
)

const (
	aliceKey   = "alice-console-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"
	malloryKey = "mallory-console-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"
)

// browser is a person's browser on the console: a cookie jar, redirects
// not followed.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base, key string) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	_, page := b.get("/login")
	if code, _ := b.post("/login", url.Values{"csrf": {csrfOf(t, page)}, "key": {key}, "next": {"/connections"}}); code != http.StatusOK {
		t.Fatalf("sign-in: %d", code)
	}
	return b
}

func (b *browser) do(req *http.Request) (int, string) {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if loc := resp.Header.Get("Location"); loc != "" {
		return resp.StatusCode, loc
	}
	return resp.StatusCode, string(body)
}

func (b *browser) get(path string) (int, string) {
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) (int, string) {
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var reCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := reCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in\n%s", page)
	}
	return m[1]
}

// TestConnectLinks_LinearThroughConsole is issue 27's story on Linear,
// where others read the session: the tool needs Ann's connection, the
// session gets an elicitation with Linear's auth signal whose link is
// the console's connections page (never the provider's URL); Mallory,
// signed in as herself, follows it and is refused with nothing stored;
// Ann (her key linked to her person) follows it, connects at the
// provider, comes back to the console, and the Linear session is told.
func TestConnectLinks_LinearThroughConsole(t *testing.T) {
	peer := newOAuthPeer(t)
	keyFile := writeKeyFile(t, genKey(t))
	more := fmt.Sprintf(`public_url: http://127.0.0.1:9
secrets: {key_file: %s}
api_keys: [{name: alice, key: %s}, {name: mallory, key: %s}]
mcp_servers:
  - {id: tracker, url: %s/mcp, auth: oauth, per: person}
`, keyFile, aliceKey, malloryKey, peer.srv.URL)
	la := newLinearAppTools(t, "ask, tracker", "", "", more)

	// Bob connected first: the server's tools are listed with his token.
	la.must(http.StatusOK, "POST", "/v1/people", map[string]string{"id": "bob", "name": "Bob"}, nil)
	var link struct{ URL string }
	la.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": "mcp:tracker", "person": "bob"}, &link)
	back, err := oauthtest.Follow(link.URL, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := la.do("GET", "/oauth/callback?"+back.Encode(), nil); code != http.StatusOK {
		t.Fatalf("Bob's callback: %d %s", code, body)
	}
	la.waitLog(regexp.MustCompile("mcp server connected"))

	la.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("Please connect first."))
	if code := la.event("created", sidA, "who am I in the tracker?", ""); code != http.StatusOK {
		t.Fatalf("created: %d", code)
	}
	el := la.waitActivity(sidA, "elicitation", "needs your own connection to mcp:tracker")
	var md struct {
		URL, UserID, ProviderName string
	}
	if el.Signal != "auth" || json.Unmarshal(el.SignalMetadata, &md) != nil {
		t.Fatalf("elicitation %+v: want the auth signal", el)
	}
	u, err := url.Parse(md.URL)
	if err != nil || u.Host != "127.0.0.1:9" || u.Path != "/connections" || strings.Contains(md.URL, "authorize") ||
		md.UserID != linearUser || md.ProviderName != "mcp:tracker" {
		t.Fatalf("auth signal metadata %+v: want brain's connections page, for the Linear user", md)
	}
	person := u.Query().Get("for")
	if person == "" || u.Query().Get("connect") != "mcp:tracker" {
		t.Fatalf("link %s names no person", md.URL)
	}
	la.waitActivity(sidA, "response", "Please connect first.")
	if got := peer.calls(); len(got) != 0 {
		t.Fatalf("the server got calls %v before Ann connected", got)
	}
	var people struct{ People []json.RawMessage }
	la.must(http.StatusOK, "GET", "/v1/people", nil, &people)
	before := len(people.People)

	// Mallory follows Ann's link: refused, nothing stored.
	mallory := newBrowser(t, la.base, malloryKey)
	_, page := mallory.get(u.RequestURI())
	if !strings.Contains(page, "made for someone else") || strings.Contains(page, `name="for" value="`+person+`"`) {
		t.Fatalf("Mallory's view of Ann's link:\n%s", page)
	}
	form := url.Values{"csrf": {csrfOf(t, page)}, "provider": {"mcp:tracker"}}
	for k, v := range u.Query() {
		if k != "connect" {
			form[k] = v
		}
	}
	if code, body := mallory.post("/connections/connect", form); code != http.StatusForbidden || strings.Contains(body, "authorize") {
		t.Fatalf("Mallory's connect with Ann's link: %d\n%s", code, body)
	}
	la.must(http.StatusOK, "GET", "/v1/people", nil, &people)
	var conns struct {
		Connections []struct{ PersonID, Status string } `json:"connections"`
	}
	la.must(http.StatusOK, "GET", "/v1/connections?person="+person, nil, &conns)
	if len(people.People) != before || len(conns.Connections) != 0 {
		t.Fatalf("after Mallory's click: %d people (was %d), Ann's connections %+v", len(people.People), before, conns.Connections)
	}

	// Ann's key is linked to her person; her click connects her.
	la.must(http.StatusOK, "POST", "/v1/people/"+person+"/identities", map[string]string{"surface": "api", "external_id": "alice"}, nil)
	ann := newBrowser(t, la.base, aliceKey)
	_, page = ann.get(u.RequestURI())
	if !strings.Contains(page, `name="for" value="`+person+`"`) {
		t.Fatalf("Ann's view of her link:\n%s", page)
	}
	form.Set("csrf", csrfOf(t, page))
	code, page := ann.post("/connections/connect", form)
	m := regexp.MustCompile(`url=([^"]+)"`).FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("Ann's connect: %d\n%s", code, page)
	}
	back, err = oauthtest.Follow(html.UnescapeString(m[1]), "ann")
	if err != nil {
		t.Fatal(err)
	}
	code, loc := ann.get("/oauth/callback?" + back.Encode())
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/connections?notice=Connected") {
		t.Fatalf("Ann's callback: %d %s", code, loc)
	}
	la.waitActivity(sidA, "thought", "Connected mcp:tracker")
	la.must(http.StatusOK, "GET", "/v1/connections?person="+person, nil, &conns)
	if len(conns.Connections) != 1 || conns.Connections[0].Status != "connected" {
		t.Fatalf("Ann's connections %+v", conns.Connections)
	}
	if _, page := ann.get("/connections"); !strings.Contains(page, "mcp:tracker") || !strings.Contains(page, "status-connected") {
		t.Fatalf("Ann's connections page:\n%s", page)
	}
}

// TestConnectLinks_GitHubReply: on GitHub, where anyone reads the
// conversation, the link is a reply pointing at the console's connections
// page for the person, never the provider's authorization URL; once they
// connect through it, the conversation is told.
func TestConnectLinks_GitHubReply(t *testing.T) {
	peer := newOAuthPeer(t)
	keyFile := writeKeyFile(t, genKey(t))
	more := fmt.Sprintf(`public_url: http://127.0.0.1:9
secrets: {key_file: %s}
api_keys: [{name: alice, key: %s}]
mcp_servers:
  - {id: tracker, url: %s/mcp, auth: oauth, per: person}
`, keyFile, aliceKey, peer.srv.URL)
	ga := newGHAppTools(t, "token: "+ghToken, "ask, tracker", more)
	ga.must(http.StatusOK, "POST", "/v1/people", map[string]string{"id": "bob", "name": "Bob"}, nil)
	var link struct{ URL string }
	ga.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": "mcp:tracker", "person": "bob"}, &link)
	back, err := oauthtest.Follow(link.URL, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := ga.do("GET", "/oauth/callback?"+back.Encode(), nil); code != http.StatusOK {
		t.Fatalf("Bob's callback: %d %s", code, body)
	}
	ga.waitLog(regexp.MustCompile("mcp server connected"))

	ga.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("Please connect first."))
	if st, _ := ga.comment("alice", "@brainy who am I in the tracker?", "", nil); st != http.StatusOK {
		t.Fatalf("status %d", st)
	}
	reply := ga.gh.waitComment(t, "needs your own connection to mcp:tracker")
	body := reply.Bodies[0]
	m := regexp.MustCompile(`\]\((http://127\.0\.0\.1:9/connections\?[^)]+)\)`).FindStringSubmatch(body)
	if m == nil || !strings.HasPrefix(body, "@alice ") || strings.Contains(body, "authorize") {
		t.Fatalf("the reply %q: want @alice and a link to the console's connections page only", body)
	}
	u, _ := url.Parse(m[1])
	person := u.Query().Get("for")
	if u.Query().Get("session") != ga.session().ID || person == "" {
		t.Fatalf("link %s", m[1])
	}
	ga.must(http.StatusOK, "POST", "/v1/people/"+person+"/identities", map[string]string{"surface": "api", "external_id": "alice"}, nil)
	alice := newBrowser(t, ga.base, aliceKey)
	_, page := alice.get(u.RequestURI())
	form := url.Values{"csrf": {csrfOf(t, page)}}
	for k, v := range u.Query() {
		form[k] = v
	}
	form["provider"] = form["connect"]
	_, page = alice.post("/connections/connect", form)
	mm := regexp.MustCompile(`url=([^"]+)"`).FindStringSubmatch(page)
	if mm == nil {
		t.Fatalf("Alice's connect:\n%s", page)
	}
	back, err = oauthtest.Follow(html.UnescapeString(mm[1]), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if code, loc := alice.get("/oauth/callback?" + back.Encode()); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/connections?notice=") {
		t.Fatalf("callback: %d %s", code, loc)
	}
	ga.gh.waitComment(t, "@alice connected mcp:tracker. Mention @brainy with `retry`")
}

// TestConnectLinks_APISessionPage: an API session's call that needs the
// person's connection reports, in the call, the link the session's page
// in the console shows (the connections page for that person); the
// model is told where the link is.
func TestConnectLinks_APISessionPage(t *testing.T) {
	peer := newOAuthPeer(t)
	keyFile := writeKeyFile(t, genKey(t))
	more := fmt.Sprintf(`public_url: http://127.0.0.1:9
secrets: {key_file: %s}
api_keys: [{name: alice, key: %s}]
mcp_servers:
  - {id: tracker, url: %s/mcp, auth: oauth, per: person}
`, keyFile, aliceKey, peer.srv.URL)
	ta := newTestApp(t, "    tools: [tracker]\n"+more, Options{})
	ta.must(http.StatusOK, "POST", "/v1/people", map[string]string{"id": "bob", "name": "Bob"}, nil)
	var link struct{ URL string }
	ta.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": "mcp:tracker", "person": "bob"}, &link)
	back, err := oauthtest.Follow(link.URL, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := ta.do("GET", "/oauth/callback?"+back.Encode(), nil); code != http.StatusOK {
		t.Fatalf("Bob's callback: %d %s", code, body)
	}
	ta.waitLog(regexp.MustCompile("mcp server connected"))

	ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("Please connect first."))
	s := ta.createSession()
	ta.sendMessage(s.ID, "who am I in the tracker?")
	_, evs := ta.waitTurns(s.ID, 1)
	var progress, result string
	for _, ev := range evs {
		switch ev.Type {
		case "tool.progress":
			progress = string(ev.Data)
		case "tool.result":
			result = string(ev.Data)
		}
	}
	if !strings.Contains(progress, `"brain_connect":{"provider":"mcp:tracker","person":"`) || !strings.Contains(result, "a link on this session's page in the console") {
		t.Fatalf("progress %s\nresult %s", progress, result)
	}
	alice := newBrowser(t, ta.base, aliceKey)
	_, page := alice.get("/sessions/" + s.ID)
	m := regexp.MustCompile(`href="(/connections\?call=[^"]+)">connect mcp:tracker`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the session's page shows no connect link:\n%s", page)
	}

	// The key's holder is the person the link names (the API knows her by
	// the key's name): she connects, comes back to the session, retries.
	_, page = alice.get(html.UnescapeString(m[1]))
	u, _ := url.Parse(html.UnescapeString(m[1]))
	form := url.Values{"csrf": {csrfOf(t, page)}, "provider": {"mcp:tracker"}}
	for _, k := range []string{"for", "session", "call", "tool"} {
		form.Set(k, u.Query().Get(k))
	}
	_, page = alice.post("/connections/connect", form)
	mm := regexp.MustCompile(`url=([^"]+)"`).FindStringSubmatch(page)
	if mm == nil {
		t.Fatalf("connect:\n%s", page)
	}
	back, err = oauthtest.Follow(html.UnescapeString(mm[1]), "alice")
	if err != nil {
		t.Fatal(err)
	}
	code, loc := alice.get("/oauth/callback?" + back.Encode())
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/sessions/"+s.ID+"?") {
		t.Fatalf("callback: %d %s, want back to the session", code, loc)
	}
	_, page = alice.get(loc)
	if !strings.Contains(page, "You connected mcp:tracker") || !strings.Contains(page, "Retry tracker__whoami") {
		t.Fatalf("back at the session:\n%s", page)
	}
	ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("You are alice."))
	retry := url.Values{"csrf": {csrfOf(t, page)}, "call": {u.Query().Get("call")}, "tool": {"tracker__whoami"}}
	if code, _ := alice.post("/sessions/"+s.ID+"/retry-call", retry); code != http.StatusSeeOther {
		t.Fatalf("retry: %d", code)
	}
	_, evs = ta.waitTurns(s.ID, 2)
	var results []string
	for _, ev := range evs {
		if ev.Type == "tool.result" {
			results = append(results, string(ev.Data))
		}
	}
	if len(results) != 2 || !strings.Contains(results[1], "you are alice") {
		t.Fatalf("tool results %v: want the retried call to run as alice", results)
	}
	if code, loc := alice.post("/sessions/"+s.ID+"/retry-call", retry); code != http.StatusSeeOther || !strings.Contains(loc, "retried+already") {
		t.Fatalf("a second retry: %d %s", code, loc)
	}
}
