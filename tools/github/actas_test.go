package github

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"brain/tools"
)

// fakeUsers maps identities to user tokens; anyone else has no connection.
type fakeUsers map[tools.Identity]string

func (u fakeUsers) UserToken(_ context.Context, tool string, who tools.Identity) (string, error) {
	if tok, ok := u[who]; ok {
		return tok, nil
	}
	return "", &tools.ConnectionRequired{Tool: tool, Provider: UserProvider, Person: "p-" + who.ExternalID, Identity: who}
}

var (
	alice = tools.Identity{Surface: "slack", ExternalID: "U_ALICE"}
	bob   = tools.Identity{Surface: "slack", ExternalID: "U_BOB"}
)

const (
	aliceToken = "ghu_aliceUserToken0123456789abcdef"
	bobToken   = "ghu_bobUserToken0123456789abcdefgh"
)

// auths returns the Authorization headers of the API requests since n.
func (f *fakeGitHub) authsSince(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.auths[n:])
}

func (f *fakeGitHub) authCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.auths)
}

func actsAsFamily(t *testing.T, f *fakeGitHub, actsAs map[string]string) family {
	t.Helper()
	fm := newFamily(t, f, func(c *Config) {
		c.ActsAs = actsAs
		c.UserTokens = fakeUsers{alice: aliceToken, bob: bobToken}
	})
	f.mu.Lock()
	f.token = "" // the fake answers every token; the test reads which came
	f.mu.Unlock()
	return fm
}

func allBearer(auths []string, tok string) bool {
	if len(auths) == 0 {
		return false
	}
	for _, a := range auths {
		if a != "Bearer "+tok {
			return false
		}
	}
	return true
}

// TestActsAs_ApproverAppliesWithTheDecidersToken: the preview reads as
// the App, the apply writes with the approver's user token (not the
// requester's), and reads acting as the requester use theirs.
func TestActsAs_ApproverAppliesWithTheDecidersToken(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("octocat/Hello-World", fakeIssue{number: 1347, title: "Found a bug"})
	fm := actsAsFamily(t, f, map[string]string{ActsAsDefault: tools.ActsAsRequester, "github_comment": tools.ActsAsApprover})
	in := json.RawMessage(`{"repo":"octocat/Hello-World","number":1347,"body":"On it"}`)
	call := tools.Call{Input: in, SessionID: "s1", ToolCallID: "c1", Requester: alice}

	n := f.authCount()
	if _, err := fm["github_comment"].Preview(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	if got := f.authsSince(n); !allBearer(got, testToken) {
		t.Fatalf("preview sent %v, want the App's token", got)
	}
	n = f.authCount()
	call.Approver = bob
	raw, err := fm["github_comment"].Apply(context.Background(), call, tools.Decision{ID: decision, By: "U_BOB"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.authsSince(n); !allBearer(got, bobToken) {
		t.Fatalf("apply sent %v, want only Bob's user token", got)
	}
	if strings.Contains(string(raw), bobToken) {
		t.Fatal("the user token reached the result")
	}

	n = f.authCount()
	read := tools.Call{Input: json.RawMessage(`{"repo":"octocat/Hello-World","number":1347}`), SessionID: "s1", ToolCallID: "c2", Requester: alice}
	if _, err := fm["github_get_issue"].Run(context.Background(), read); err != nil {
		t.Fatal(err)
	}
	if got := f.authsSince(n); !allBearer(got, aliceToken) {
		t.Fatalf("read sent %v, want Alice's user token", got)
	}
}

// TestActsAs_NoConnectionSendsNothing: a person without a connection is
// a ConnectionRequired naming them (the bot sends the connect link) and
// sends no request; a schedule's call is UserTokens' to resolve (the bot
// refuses it or sends it through a service account, tools.HolderOf).
func TestActsAs_NoConnectionSendsNothing(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("octocat/Hello-World", fakeIssue{number: 1347, title: "Found a bug"})
	fm := actsAsFamily(t, f, map[string]string{"github_comment": tools.ActsAsApprover, "github_get_issue": tools.ActsAsRequester})
	carol := tools.Identity{Surface: "slack", ExternalID: "U_CAROL"}
	in := json.RawMessage(`{"repo":"octocat/Hello-World","number":1347,"body":"On it"}`)
	before := len(f.log())
	_, err := fm["github_comment"].Apply(context.Background(), tools.Call{Input: in, SessionID: "s1", ToolCallID: "c1", Requester: alice, Approver: carol},
		tools.Decision{ID: decision, By: "U_CAROL"})
	cr, ok := tools.AsConnectionRequired(err)
	if !ok || cr.Identity != carol || cr.Provider != UserProvider || cr.Tool != "github_comment" {
		t.Fatalf("apply as carol: %v, want ConnectionRequired for carol", err)
	}
	if got := len(f.log()); got != before {
		t.Fatalf("%d requests sent without a person's token", got-before)
	}
	nobody := tools.Identity{}
	_, err = fm["github_get_issue"].Run(context.Background(), tools.Call{Input: json.RawMessage(`{"repo":"octocat/Hello-World","number":1347}`),
		SessionID: "s1", ToolCallID: "c2", Requester: nobody})
	var te *tools.Error
	if !errors.As(err, &te) || te.UnknownOutcome || !strings.Contains(te.Message, "nobody to act as") {
		t.Fatalf("nobody: %v", err)
	}
	if got := len(f.log()); got != before {
		t.Fatalf("%d requests sent without a person's token", got-before)
	}
}

func TestActsAs_ConfigErrorsNameTheKey(t *testing.T) {
	f := newFakeGitHub(t)
	users := fakeUsers{}
	for _, c := range []struct {
		actsAs map[string]string
		users  UserTokens
		want   string
	}{
		{map[string]string{"github_comment": "owner"}, users, "acts_as.github_comment: \"owner\" is not app, requester or approver"},
		{map[string]string{"github_nope": "requester"}, users, "acts_as.github_nope: no such GitHub tool"},
		{map[string]string{"github_get_issue": "approver"}, users, "acts_as.github_get_issue: approver is for tools that wait for approval"},
		{map[string]string{proposeTool: "approver"}, users, "acts_as.github_propose_change: always acts as the app"},
		{map[string]string{ActsAsDefault: "requester"}, nil, "need user_tokens"},
	} {
		cfg := Config{Token: testToken, BaseURL: f.url(), Repos: []string{"acme/*"}, ActsAs: c.actsAs, UserTokens: c.users,
			Workspace: func(string) string { return t.TempDir() }}
		if _, err := Tools(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("acts_as %v: %v, want %q", c.actsAs, err, c.want)
		}
	}
	// A default of approver leaves github_propose_change acting as the
	// App and is allowed.
	cfg := Config{Token: testToken, BaseURL: f.url(), Repos: []string{"acme/*"}, ActsAs: map[string]string{ActsAsDefault: "approver"},
		UserTokens: users, Workspace: func(string) string { return t.TempDir() }}
	if _, err := Tools(cfg); err != nil {
		t.Fatal(err)
	}
}

// TestActsAs_UserTokenScrubbed: GitHub quoting the person's token back
// (an error message) never shows it.
func TestActsAs_UserTokenScrubbed(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("octocat/Hello-World", fakeIssue{number: 1347, title: "Found a bug"})
	fm := actsAsFamily(t, f, map[string]string{"github_get_issue": tools.ActsAsRequester})
	f.mu.Lock()
	f.before = func(w http.ResponseWriter, r *http.Request) bool {
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "token " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " may not read this",
			"documentation_url": "https://docs.github.com/rest"})
		return true
	}
	f.mu.Unlock()
	f.contractViolations() // the fake's answer is made up for the test
	_, err := fm["github_get_issue"].Run(context.Background(), tools.Call{Input: json.RawMessage(`{"repo":"octocat/Hello-World","number":1347}`),
		SessionID: "s1", ToolCallID: "c1", Requester: alice})
	if err == nil || strings.Contains(err.Error(), aliceToken) || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("error %v: want the user token redacted", err)
	}
	t.Cleanup(func() { f.contractViolations() })
}
