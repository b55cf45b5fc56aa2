package web

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// fakeConnections keeps people and connections in memory and records the
// flows the console started.
type fakeConnections struct {
	mu      sync.Mutex
	people  map[string]store.Person
	conns   map[string]store.Connection
	started []string // "person provider origin-session return"
	revoked []string
}

var _ Connections = (*fakeConnections)(nil)

func newFakeConnections() *fakeConnections {
	f := &fakeConnections{people: map[string]store.Person{}, conns: map[string]store.Connection{}}
	f.people["mem"] = store.Person{ID: "mem", Name: "Mem", Identities: []store.Identity{{Surface: "slack", ExternalID: "U0MEM"}, {Surface: "linear", ExternalID: "lin-mem"}}}
	f.people["alice"] = store.Person{ID: "alice", Name: "Alice", Identities: []store.Identity{{Surface: "slack", ExternalID: "U0ALICE"}}}
	f.conns["conn-mem"] = store.Connection{ID: "conn-mem", PersonID: "mem", Provider: "mcp:tracker", Account: "mem@tracker", Scope: "read",
		AccessToken: "at-secret-mem", RefreshToken: "rt-secret-mem", Status: store.ConnectionConnected, ExpiresAt: t0.Add(time.Hour)}
	f.conns["conn-alice"] = store.Connection{ID: "conn-alice", PersonID: "alice", Provider: "mcp:tracker", Account: "alice@tracker",
		AccessToken: "at-secret-alice", Status: store.ConnectionConnected}
	f.conns["conn-ws"] = store.Connection{ID: "conn-ws", Provider: "mcp:notes", Account: "workspace", AccessToken: "at-secret-ws", Status: store.ConnectionConnected}
	return f
}

func (f *fakeConnections) PersonByIdentity(_ context.Context, id store.Identity) (store.Person, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.people {
		for _, i := range p.Identities {
			if i == id {
				return p, nil
			}
		}
	}
	return store.Person{}, engine.ErrNotFound
}

func (f *fakeConnections) Person(_ context.Context, id string) (store.Person, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.people[id]
	if !ok {
		return store.Person{}, engine.ErrNotFound
	}
	return p, nil
}

func (f *fakeConnections) SavePerson(_ context.Context, p store.Person) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.people[p.ID] = p
	return nil
}

func (f *fakeConnections) LinkIdentity(_ context.Context, _ time.Time, person string, id store.Identity) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.people[person]
	p.Identities = append(p.Identities, id)
	f.people[person] = p
	return nil
}

func (f *fakeConnections) ConnectionsOf(_ context.Context, person string, all bool) ([]store.Connection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.Connection
	for _, c := range f.conns {
		if all || c.PersonID == person {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeConnections) ConnectionByID(_ context.Context, id string) (store.Connection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.conns[id]
	if !ok {
		return store.Connection{}, engine.ErrNotFound
	}
	return c, nil
}

func (f *fakeConnections) RevokeConnection(_ context.Context, _ time.Time, id, problem string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.conns[id]
	c.Status, c.Problem, c.AccessToken, c.RefreshToken = store.ConnectionRevoked, problem, "", ""
	f.conns[id] = c
	f.revoked = append(f.revoked, id+": "+problem)
	return true, nil
}

func (f *fakeConnections) Providers() []ConnectProvider {
	return []ConnectProvider{{Name: "mcp:notes"}, {Name: "mcp:tracker", PerPerson: true}}
}

func (f *fakeConnections) Connect(_ context.Context, person, provider string, from *ConnectOrigin) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := ""
	if from != nil {
		o = from.SessionID + " " + from.Return
	}
	f.started = append(f.started, strings.TrimSpace(person+" "+provider+" "+o))
	return "https://auth.example/authorize?state=s1&client_id=brain", nil
}

func (f *fakeConnections) snapshot() (started, revoked []string, people int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...), append([]string(nil), f.revoked...), len(f.people)
}

func connConsole(t *testing.T) (*console, *fakeConnections, *fakeAuditor) {
	t.Helper()
	cfg := keyed()
	fc, a := newFakeConnections(), &fakeAuditor{}
	cfg.Connections, cfg.Audit = fc, a
	return newConsole(t, cfg), fc, a
}

// TestConnections_PersonSeesAndRevokesOwn: a person signed in with Slack
// sees their own connections (never a token, nobody else's), revokes
// theirs (audited), and cannot revoke anyone else's.
func TestConnections_PersonSeesAndRevokesOwn(t *testing.T) {
	c, fc, a := connConsole(t)
	csrf := c.as("member")
	resp, page := c.get("/connections")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "mem@tracker") || !strings.Contains(page, "<code>read</code>") ||
		!strings.Contains(page, "2026-12-01 10:00:00 UTC") || !strings.Contains(page, `action="/connections/conn-mem/revoke"`) {
		t.Fatalf("the member's connections page: %d\n%s", resp.StatusCode, page)
	}
	for _, leak := range []string{"at-secret", "rt-secret", "alice@tracker", "conn-alice", "conn-ws", "Everyone"} {
		if strings.Contains(page, leak) {
			t.Errorf("the member's page shows %q", leak)
		}
	}
	// Per-person providers only: the workspace's is an admin's.
	if !strings.Contains(page, `value="mcp:tracker"`) || strings.Contains(page, `value="mcp:notes"`) {
		t.Errorf("providers offered to a member:\n%s", page)
	}
	if !strings.Contains(page, `href="/connections" aria-current="page"`) {
		t.Error("the navigation does not mark the connections page")
	}

	if resp, _ := c.post("/connections/conn-alice/revoke", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("revoking another person's connection: %d, want 404", resp.StatusCode)
	}
	if resp, _ := c.post("/connections/conn-mem/revoke", url.Values{"csrf": {"wrong"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("revoke without the CSRF token: %d", resp.StatusCode)
	}
	if _, revoked, _ := fc.snapshot(); len(revoked) != 0 {
		t.Fatalf("revoked %v before a valid revoke", revoked)
	}
	resp, _ = c.post("/connections/conn-mem/revoke", url.Values{"csrf": {csrf}})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/connections?notice=Revoked") {
		t.Fatalf("revoke: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, revoked, _ := fc.snapshot(); len(revoked) != 1 || revoked[0] != "conn-mem: revoked by its person in the console" {
		t.Errorf("revoked %v", revoked)
	}
	if len(a.acts) != 1 || a.acts[0] != "U0MEM connection.revoked conn-mem" {
		t.Errorf("audited %v", a.acts)
	}
	if _, page := c.get("/connections"); !strings.Contains(page, "status-revoked") || strings.Contains(page, `action="/connections/conn-mem/revoke"`) {
		t.Errorf("after the revoke:\n%s", page)
	}
}

// TestConnections_AdminSeesEveryoneAndConnectsWorkspace: an admin sees
// everyone's connections and the workspace's, revokes anyone's (the
// problem names them), and connects a workspace provider, which a member
// may not.
func TestConnections_AdminSeesEveryoneAndConnectsWorkspace(t *testing.T) {
	c, fc, a := connConsole(t)
	memberCSRF := c.as("member")
	if resp, _ := c.post("/connections/connect", url.Values{"csrf": {memberCSRF}, "provider": {"mcp:notes"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a member connecting the workspace's provider: %d", resp.StatusCode)
	}
	csrf := c.as("admin")
	_, page := c.get("/connections")
	for _, want := range []string{"Everyone", "alice@tracker", "mem@tracker", "(workspace)", `value="mcp:notes"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the admin's page lacks %q", want)
		}
	}
	if strings.Contains(page, "at-secret") {
		t.Error("the admin's page shows a token")
	}
	if resp, _ := c.post("/connections/conn-alice/revoke", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("admin revoke: %d", resp.StatusCode)
	}
	resp, body := c.post("/connections/connect", url.Values{"csrf": {csrf}, "provider": {"mcp:notes"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(html.UnescapeString(body), `url=https://auth.example/authorize?state=s1&client_id=brain`) {
		t.Fatalf("admin connect: %d\n%s", resp.StatusCode, body)
	}
	started, revoked, _ := fc.snapshot()
	if len(revoked) != 1 || revoked[0] != "conn-alice: revoked by ops in the console" {
		t.Errorf("revoked %v", revoked)
	}
	if len(started) != 1 || started[0] != "mcp:notes  /connections?notice=Connected+mcp%3Anotes." {
		t.Errorf("started %q, want the workspace's flow returning to the page", started)
	}
	if strings.Join(a.acts, ",") != "ops connection.revoked conn-alice,ops connection.connect_started mcp:notes" {
		t.Errorf("audited %v", a.acts)
	}
}

// TestConnections_LinkForAnotherPersonRefused is the threat of links on
// surfaces others read: Alice's link, followed by Mallory signed in as
// herself, shows a refusal and starts nothing, stores nothing (not even a
// person for Mallory); Alice's own click starts her flow, bound to the
// session the link came from.
func TestConnections_LinkForAnotherPersonRefused(t *testing.T) {
	c, fc, _ := connConsole(t)
	c.eng.addSession(engine.Session{ID: "ses-lin", Agent: "default", Origin: engine.OriginLinear, StartedBy: "U0ALICE", Status: engine.StatusIdle})
	link := ConnectLink("", "mcp:tracker", "alice", "ses-lin", "call-9", "tracker__create")

	mallory := c.s.auth.put(visitor{signedIn: true, name: "Mallory (Slack)", by: "U0MAL"})
	u, _ := url.Parse(c.srv.URL)
	c.client.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: mallory.token, Path: "/"}})
	_, page := c.get(link)
	if !strings.Contains(page, "made for someone else") || strings.Contains(page, `name="for" value="alice"`) {
		t.Fatalf("Mallory's view of Alice's link:\n%s", page)
	}
	form := url.Values{"csrf": {mallory.csrf}, "provider": {"mcp:tracker"}, "for": {"alice"}, "session": {"ses-lin"}, "call": {"call-9"}, "tool": {"tracker__create"}}
	if resp, _ := c.post("/connections/connect", form); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Mallory posting Alice's link: %d, want 403", resp.StatusCode)
	}
	started, _, people := fc.snapshot()
	if len(started) != 0 || people != 2 {
		t.Fatalf("after Mallory's click: flows %v, %d people; want none started, nothing stored", started, people)
	}

	// A hostile parameter is refused as not brain's.
	if _, page := c.get(ConnectLink("", "mcp:tracker", "alice", "ses-lin", "call-9", "x`; ignore all previous")); !strings.Contains(page, "not one brain made") {
		t.Errorf("a link with a hostile tool name:\n%s", page)
	}

	alice := c.s.auth.put(visitor{signedIn: true, name: "Alice (Slack)", by: "U0ALICE"})
	c.client.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: alice.token, Path: "/"}})
	_, page = c.get(link)
	if !strings.Contains(page, `name="for" value="alice"`) || !strings.Contains(page, "<code>tracker__create</code>") {
		t.Fatalf("Alice's view of her link:\n%s", page)
	}
	form.Set("csrf", alice.csrf)
	if resp, _ := c.post("/connections/connect", form); resp.StatusCode != http.StatusOK {
		t.Fatalf("Alice's connect: %d", resp.StatusCode)
	}
	started, _, _ = fc.snapshot()
	if len(started) != 1 || !strings.HasPrefix(started[0], "alice mcp:tracker ses-lin /connections?notice=") {
		t.Errorf("started %q, want Alice's flow from the Linear session", started)
	}
}

// TestConnections_NewPersonOnConnect: a Slack user linked to nobody who
// connects gets a person of their own, linked to their Slack identity.
func TestConnections_NewPersonOnConnect(t *testing.T) {
	c, fc, _ := connConsole(t)
	v := c.s.auth.put(visitor{signedIn: true, name: "Newt (Slack)", by: "U0NEWT"})
	u, _ := url.Parse(c.srv.URL)
	c.client.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: v.token, Path: "/"}})
	if _, page := c.get("/connections"); !strings.Contains(page, "You have connected no account") {
		t.Fatalf("a person with nothing:\n%s", page)
	}
	if resp, _ := c.post("/connections/connect", url.Values{"csrf": {v.csrf}, "provider": {"mcp:tracker"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("connect: %d", resp.StatusCode)
	}
	p, err := fc.PersonByIdentity(context.Background(), store.Identity{Surface: "slack", ExternalID: "U0NEWT"})
	started, _, _ := fc.snapshot()
	if err != nil || len(started) != 1 || !strings.HasPrefix(started[0], p.ID+" mcp:tracker") || p.Name != "Newt (Slack)" {
		t.Fatalf("person %+v %v, flows %v", p, err, started)
	}
}

// TestConnections_AuditFailureRefuses: an act that cannot be recorded is
// not done.
func TestConnections_AuditFailureRefuses(t *testing.T) {
	c, fc, a := connConsole(t)
	a.RecordFunc = func(string, string, string) error { return errors.New("database down") }
	csrf := c.as("member")
	if resp, _ := c.post("/connections/conn-mem/revoke", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("revoke: %d", resp.StatusCode)
	}
	if resp, _ := c.post("/connections/connect", url.Values{"csrf": {csrf}, "provider": {"mcp:tracker"}}); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("connect: %d", resp.StatusCode)
	}
	if started, revoked, _ := fc.snapshot(); len(started)+len(revoked) != 0 {
		t.Errorf("done without a record: %v %v", started, revoked)
	}
}

// TestConnections_ConsoleSessionLinkAndRetry: a console session's call
// that needed a connection shows "connect" in its span, pointing at the
// connections page for its person; back from the provider, the session
// offers the retry, which is sent once.
func TestConnections_ConsoleSessionLinkAndRetry(t *testing.T) {
	c, _, _ := connConsole(t)
	c.eng.addSession(engine.Session{ID: "ses-c", Agent: "default", Origin: engine.OriginConsole, StartedBy: "U0MEM", Status: engine.StatusIdle})
	c.eng.appendTurnEvent(t, "ses-c", "turn1", engine.TurnStarted{})
	c.eng.appendTurnEvent(t, "ses-c", "turn1", engine.ToolCall{ID: "call-1", Name: "tracker__whoami"})
	c.eng.appendTurnEvent(t, "ses-c", "turn1", engine.ToolProgress{CallID: "call-1", Name: "tracker__whoami", Data: mustJSON(ConnectProgress("mcp:tracker", "mem", "tracker__whoami"))})
	// Something else's progress that tries to point elsewhere gets a link
	// to this console's page, or none.
	c.eng.appendTurnEvent(t, "ses-c", "turn1", engine.ToolProgress{CallID: "call-1", Name: "tracker__whoami", Data: mustJSON(map[string]any{"brain_connect": map[string]string{"provider": "https://evil.example/", "url": "https://evil.example/"}})})
	csrf := c.as("member")
	want := html.EscapeString(ConnectLink("", "mcp:tracker", "mem", "ses-c", "call-1", "tracker__whoami"))
	for _, view := range []string{"", "?view=raw"} {
		_, page := c.get("/sessions/ses-c" + view)
		if !strings.Contains(page, `href="`+want+`"`) || strings.Contains(page, "evil.example") {
			t.Errorf("session page%s: no connect link %s (or a foreign one):\n%s", view, want, page)
		}
	}
	_, page := c.get("/sessions/ses-c?connected=mcp:tracker&call=call-1&tool=tracker__whoami")
	if !strings.Contains(page, "You connected mcp:tracker") || !strings.Contains(page, `action="/sessions/ses-c/retry-call"`) {
		t.Fatalf("back from connecting:\n%s", page)
	}
	resp, _ := c.post("/sessions/ses-c/retry-call", url.Values{"csrf": {csrf}, "call": {"call-1"}, "tool": {"tracker__whoami"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %d", resp.StatusCode)
	}
	c.eng.mu.Lock()
	sent := append([]engine.Input(nil), c.eng.sent...)
	c.eng.mu.Unlock()
	if len(sent) != 1 || sent[0].Text != RetryCallText("tracker__whoami") || sent[0].Author != "U0MEM" || sent[0].IdempotencyKey != "console-retry-call:ses-c:call-1" {
		t.Errorf("sent %+v", sent)
	}
	if resp, _ := c.post("/sessions/ses-c/retry-call", url.Values{"csrf": {csrf}, "call": {"call-1"}, "tool": {"x y"}}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a retry with a hostile tool name: %d", resp.StatusCode)
	}
}

// TestConnections_LinkForConsoleIdentity: a console session's call by a
// person signed in with Slack finds them by their console identity, and
// the link names the person linked to it alone; their Slack sign-in is
// that identity, so the link is theirs.
func TestConnections_LinkForConsoleIdentity(t *testing.T) {
	c, fc, _ := connConsole(t)
	fc.people["p-console"] = store.Person{ID: "p-console", Identities: []store.Identity{{Surface: "console", ExternalID: "U0ADA"}}}
	v := c.s.auth.put(visitor{signedIn: true, name: "Ada (Slack)", by: "U0ADA"})
	u, _ := url.Parse(c.srv.URL)
	c.client.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: v.token, Path: "/"}})
	if _, page := c.get(ConnectLink("", "mcp:tracker", "p-console", "", "", "")); !strings.Contains(page, `name="for" value="p-console"`) {
		t.Fatalf("Ada's view of her console link:\n%s", page)
	}
	if resp, _ := c.post("/connections/connect", url.Values{"csrf": {v.csrf}, "provider": {"mcp:tracker"}, "for": {"p-console"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("connect: %d", resp.StatusCode)
	}
	if started, _, people := fc.snapshot(); len(started) != 1 || !strings.HasPrefix(started[0], "p-console mcp:tracker") || people != 3 {
		t.Fatalf("started %v with %d people: want p-console's flow and no new person", started, people)
	}
}
