package bot

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store"
)

const (
	alicePersonKey = "alice-person-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d"
	bobPersonKey   = "bob-person-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e"
)

// linkAlices makes two people named Alice: alice, linked to the Slack
// user UALICE and the API key alice-key, and alice2, linked to UALICE2.
func linkAlices(t *testing.T, sa *slackApp) {
	t.Helper()
	ctx := t.Context()
	for _, p := range []struct {
		id  string
		ids []store.Identity
	}{
		{"alice", []store.Identity{{Surface: store.SurfaceSlack, ExternalID: "UALICE"}, {Surface: store.SurfaceAPI, ExternalID: "alice-key"}}},
		{"alice2", []store.Identity{{Surface: store.SurfaceSlack, ExternalID: "UALICE2"}}},
	} {
		if err := sa.app.store.SavePerson(ctx, store.Person{ID: p.id, Name: "Alice", UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		for _, id := range p.ids {
			if err := sa.app.store.LinkIdentity(ctx, time.Now(), p.id, id); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSlack_HomeTabListsTheirOtherIdentitiesApprovals: an approval of a
// session Alice started through the API, with her key (linked to her
// person, as her Slack user is), shows on her Slack Home tab, found by the
// database, and she decides it there; another person of the same name
// does not see it.
func TestSlack_HomeTabListsTheirOtherIdentitiesApprovals(t *testing.T) {
	sa := newSlackAppWith(t, "api_keys: [{name: alice-key, key: "+alicePersonKey+"}]\n")
	ctx := t.Context()
	linkAlices(t, sa)

	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}),
		fakemodel.Text("Proposed."),
	)
	var s engine.Session
	sa.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "deploy the api"}, &s)
	pending := func() []engine.Approval {
		a, err := sa.app.engine.Approvals(ctx, engine.ApprovalFilter{SessionID: s.ID, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(pending()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no approval pending in the API session")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, err := sa.app.engine.Session(ctx, s.ID); err != nil || got.StartedBy != "alice-key" || got.Origin != engine.OriginAPI {
		t.Fatalf("session %+v, %v: want started by alice-key through the API", got, err)
	}

	sa.openHome("EvH1", "UALICE")
	home := sa.waitHome("UALICE", "Deploy api")
	if !strings.Contains(home, "brain_approve") {
		t.Fatalf("Alice's Home tab lacks the Approve button: %s", home)
	}
	sa.openHome("EvH2", "UALICE2")
	if v := sa.waitHome("UALICE2", "Nothing waits for you."); strings.Contains(v, "Deploy api") {
		t.Fatalf("the other Alice's Home tab lists the approval: %s", v)
	}

	sa.clickHome("UALICE", "brain_approve", sa.homeButton("UALICE", "brain_approve"))
	sa.waitHome("UALICE", "Approved: Deploy api")
	for sa.applied.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("applied %d times", sa.applied.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a, err := sa.app.engine.Approvals(ctx, engine.ApprovalFilter{SessionID: s.ID}); err != nil || len(a) != 1 || a[0].DecidedBy != "UALICE" {
		t.Fatalf("approvals %+v, %v: want one decided by UALICE", a, err)
	}
}

// TestConsole_InboxListsTheirSlackSessionsApprovals: an approval waiting
// in a Slack thread Alice started (an agent without approvers: she
// decides it) is in the console's "Needs you" inbox when she signs in
// with her API key, linked to the same person; another key holder's
// inbox does not list it.
func TestConsole_InboxListsTheirSlackSessionsApprovals(t *testing.T) {
	sa := newSlackAppWith(t, "api_keys: [{name: alice-key, key: "+alicePersonKey+"}, {name: bob-key, key: "+bobPersonKey+"}]\n")
	linkAlices(t, sa)
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}),
		fakemodel.Text("Proposed."),
	)
	ts := sa.message("Ev1", "app_mention", "UALICE", "<@"+slackfake.BotUserID+"> deploy api", "")
	sa.waitThread(ts, "Deploy api")

	if page := consoleInbox(t, sa.base, alicePersonKey); !strings.Contains(page, "Deploy api") {
		t.Fatalf("alice-key's inbox lacks the approval of Alice's Slack thread: %.2000s", page)
	}
	if page := consoleInbox(t, sa.base, bobPersonKey); strings.Contains(page, "Deploy api") || !strings.Contains(page, "No approval waits for you.") {
		t.Fatalf("bob-key's inbox lists the approval: %.2000s", page)
	}
}

// consoleInbox signs in to the console with key and returns its inbox.
func consoleInbox(t *testing.T, base, key string) string {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) string {
		t.Helper()
		resp, err := browser.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", path, resp.StatusCode, page)
		}
		return string(page)
	}
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(get("/login"))
	if m == nil {
		t.Fatal("no csrf token on /login")
	}
	resp, err := browser.PostForm(base+"/login", url.Values{"csrf": {m[1]}, "key": {key}, "next": {"/inbox"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
	return get("/inbox")
}
