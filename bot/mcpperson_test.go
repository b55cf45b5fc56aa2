package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// personMCPConfig is a Slack app whose agent has a per-person OAuth MCP
// server (the real mcp-go server behind the fake authorization server).
func personMCPApp(t *testing.T, peer *oauthPeer, actsAs string) *slackApp {
	t.Helper()
	return personMCPAppWith(t, peer, actsAs, "{ttl: 1h}", "")
}

func personMCPAppWith(t *testing.T, peer *oauthPeer, actsAs, approvals, more string) *slackApp {
	t.Helper()
	keyFile := writeKeyFile(t, genKey(t))
	acts := ""
	if actsAs != "" {
		acts = "    acts_as: " + actsAs + "\n    approval: always\n"
	}
	cfg := fmt.Sprintf(`public_url: https://brain.invalid
secrets: {key_file: %s}
mcp_servers:
  - id: tracker
    url: %s/mcp
    auth: oauth
    per: person
%s%s`, keyFile, peer.srv.URL, acts, more)
	return newSlackAppConfig(t, "anthropic", "    tools: [ask, tracker]\n", "", approvals, cfg)
}

// connectPerson connects a person through the API's connect link, as
// subject at the authorization server.
func connectPerson(t *testing.T, sa *slackApp, person, slackUser, subject string) {
	t.Helper()
	connectAs(t, sa, "mcp:tracker", person, slackUser, subject)
}

// follow runs a connect link in a browser approving as subject, through
// brain's callback.
func follow(t *testing.T, sa *slackApp, url, subject string) {
	t.Helper()
	followFor(t, sa, "mcp:tracker", url, subject)
}

// linkURL is the URL of the connect button of an ephemeral message.
func linkURL(t *testing.T, m slackfake.Message) string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			URL      string `json:"url"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(m.Blocks, &blocks)
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == "brain_connect" && e.URL != "" {
				return e.URL
			}
		}
	}
	t.Fatalf("no connect button in %s", m.Blocks)
	return ""
}

func (sa *slackApp) ephemeralTo(user, want string) slackfake.Message {
	sa.t.Helper()
	sa.waitEphemeral(user, want)
	es := sa.slack.Ephemerals()
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].User == user && strings.Contains(es[i].Text+string(es[i].Blocks), want) {
			return es[i]
		}
	}
	panic("unreachable")
}

// toolResults are the tool.result events of a session.
func (sa *slackApp) toolResults(id string) []string {
	sa.t.Helper()
	evs, err := sa.app.store.Events(context.Background(), id, 0, 0)
	if err != nil {
		sa.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Type == engine.EventToolResult {
			out = append(out, string(ev.Data))
		}
	}
	return out
}

// TestMCPPerson_SlackConnectRetry is issue 27's story end to end on the
// Slack path: Alice asks, the per-person MCP tool needs her connection,
// she gets a Connect button only she sees, connects, clicks Retry, and
// the call reaches the server with her token; Bob's token (which reads
// the tool list) is never used for Alice's call, and hers never for his.
func TestMCPPerson_SlackConnectRetry(t *testing.T) {
	peer := newOAuthPeer(t)
	sa := personMCPApp(t, peer, "")
	// Bob connected first: the server's tools are listed with his token.
	connectPerson(t, sa, "bob", "UBOB", "bob")
	sa.waitLog(regexp.MustCompile("mcp server connected"))

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("Please connect first."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> who am I in the tracker?", "")
	sa.waitThread(root, "Please connect first.")
	s := sa.session(root)
	res := sa.toolResults(s.ID)
	if len(res) != 1 || !strings.Contains(res[0], "nothing was sent") || !strings.Contains(res[0], "sent them a link") {
		t.Fatalf("tool results %v: want the connection error, nothing sent, link sent", res)
	}
	if got := peer.calls(); len(got) != 0 {
		t.Fatalf("the server got calls %v before Alice connected (Bob's token must not be used for her)", got)
	}
	// The link went to Alice alone, in the thread.
	m := sa.ephemeralTo("UALICE", "Connect mcp:tracker")
	if m.ThreadTS != root {
		t.Fatalf("connect link in thread %q, want %q", m.ThreadTS, root)
	}
	for _, e := range sa.slack.Ephemerals() {
		if e.User != "UALICE" && strings.Contains(string(e.Blocks), "brain_connect") {
			t.Fatalf("a connect link went to %s", e.User)
		}
	}
	for _, msg := range sa.slack.Thread("C1", root) {
		if strings.Contains(msg.Text+string(msg.Blocks), "/authorize?") {
			t.Fatalf("the connect link was posted where others see it: %s", msg.Text)
		}
	}
	follow(t, sa, linkURL(t, m), "alice")
	notice := sa.waitThread(root, "connected *mcp:tracker*")

	// Only Alice may retry.
	sa.click("UBOB", notice, "brain_retry_call")
	sa.waitEphemeral("UBOB", "Only <@UALICE> can retry")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("You are alice."))
	sa.click("UALICE", notice, "brain_retry_call")
	sa.waitThread(root, "You are alice.")
	res = sa.toolResults(s.ID)
	if len(res) != 2 || !strings.Contains(res[1], "you are alice") {
		t.Fatalf("tool results %v: want the retried call to run as alice", res)
	}
	// A second click runs nothing more.
	sa.click("UALICE", notice, "brain_retry_call")
	sa.waitEphemeral("UALICE", "retried already")

	// Alice's Home tab lists her connection, never its token, and
	// revokes it.
	sa.openHome("EvH1", "UALICE")
	home := sa.waitHome("UALICE", "Your connections")
	if !strings.Contains(home, "mcp:tracker") || !strings.Contains(home, "connected") {
		t.Fatalf("Alice's Home tab lacks her connection: %s", home)
	}
	for _, tok := range peer.as.Secrets() {
		if strings.Contains(home, tok) {
			t.Fatal("the Home tab shows a token")
		}
	}
	sa.clickHome("UBOB", "brain_revoke_connection", revokeValue(t, sa, "UALICE"))
	sa.waitHome("UBOB", "not yours")
	sa.clickHome("UALICE", "brain_revoke_connection", revokeValue(t, sa, "UALICE"))
	sa.waitHome("UALICE", "Revoked your connection to mcp:tracker")
	var list struct {
		Connections []struct {
			PersonID string `json:"person_id"`
			Status   string `json:"status"`
		} `json:"connections"`
	}
	sa.must(http.StatusOK, "GET", "/v1/connections", nil, &list)
	for _, c := range list.Connections {
		if want := map[bool]string{true: "connected", false: "revoked"}[c.PersonID == "bob"]; c.Status != want {
			t.Fatalf("connections after Alice revoked hers: %+v", list.Connections)
		}
	}

	// Bob's own call goes with his token.
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("You are bob."))
	root2 := sa.message("Ev2", "app_mention", "UBOB", "<@UBOT> who am I?", "")
	sa.waitThread(root2, "You are bob.")
	if got := peer.calls(); strings.Join(got, ",") != "alice,bob" {
		t.Fatalf("the server saw calls from %v, want alice then bob", got)
	}
	// No token in plain text in the database.
	rows, raw := dumpSQLite(t, filepath.Join(sa.app.cfg.DataDir, "brain.db"))
	for _, tok := range peer.as.Secrets() {
		if strings.Contains(rows, tok) || strings.Contains(string(raw), tok) {
			t.Fatal("a credential is stored in plain text")
		}
	}
}

// TestMCPPerson_ActsAsApprover: on a server with acts_as: approver, a
// call Alice asked for and Bob approved reaches the server with Bob's
// token, not hers.
func TestMCPPerson_ActsAsApprover(t *testing.T) {
	peer := newOAuthPeer(t)
	sa := personMCPAppWith(t, peer, "approver", "{ttl: 1h, approvers: [UALICE, UBOB]}", "")
	connectPerson(t, sa, "alice", "UALICE", "alice")
	connectPerson(t, sa, "bob", "UBOB", "bob")
	sa.waitLog(regexp.MustCompile("mcp server connected"))
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("Proposed."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> who am I?", "")
	card := sa.waitThread(root, "brain_approve")
	sa.click("UBOB", card, "brain_approve")
	deadline := time.Now().Add(20 * time.Second)
	for len(peer.calls()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the approved call never reached the server")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := peer.calls(); strings.Join(got, ",") != "bob" {
		t.Fatalf("the server saw %v, want bob (the approver)", got)
	}
}

// TestMCPPerson_ScheduleRefused: a schedule's session never uses a
// person's connection: the call is refused before anything is sent,
// until an admin marks one as the service account.
func TestMCPPerson_ScheduleRefused(t *testing.T) {
	peer := newOAuthPeer(t)
	sa := personMCPAppWith(t, peer, "", "{ttl: 1h}", `schedules:
  - name: nightly
    cron: "0 3 * * *"
    agent: default
    prompt: "who am I?"
`)
	connectPerson(t, sa, "bob", "UBOB", "bob")
	sa.waitLog(regexp.MustCompile("mcp server connected"))
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("Could not."))
	var run struct {
		SessionID string `json:"session_id"`
	}
	sa.must(http.StatusAccepted, "POST", "/v1/schedules/nightly/run", nil, &run)
	if run.SessionID == "" {
		t.Fatal("no session for the run")
	}
	sa.waitTurns(run.SessionID, 1)
	res := sa.toolResults(run.SessionID)
	if len(res) != 1 || !strings.Contains(res[0], "schedules never use a person's connection") {
		t.Fatalf("tool results %v: want the schedule refusal", res)
	}
	if got := peer.calls(); len(got) != 0 {
		t.Fatalf("a schedule's call reached the server as %v", got)
	}

	// Once an admin marks Bob's connection as the service account, the
	// schedule's call goes through it (tools.HolderOf, as for tools.http).
	sa.must(http.StatusOK, "POST", "/v1/connections/"+connectionOf(t, sa, "bob", "mcp:tracker")+"/service-account", map[string]bool{"enabled": true}, nil)
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__whoami", Input: `{}`}), fakemodel.Text("Done."))
	if res := runSchedule(t, sa, "nightly"); len(res) != 1 || !strings.Contains(res[0], "you are bob") {
		t.Fatalf("tool results %v: want the call as bob, the service account", res)
	}
	if got := peer.calls(); strings.Join(got, ",") != "bob" {
		t.Fatalf("the server saw %v, want bob", got)
	}
}

// revokeValue is the value of the first Revoke button (an accessory) on
// user's Home tab.
func revokeValue(t *testing.T, sa *slackApp, user string) string {
	t.Helper()
	v, _ := sa.slack.HomeView(user)
	var view struct {
		Blocks []struct {
			Accessory struct {
				ActionID string `json:"action_id"`
				Value    string `json:"value"`
			} `json:"accessory"`
		} `json:"blocks"`
	}
	_ = json.Unmarshal(v, &view)
	for _, b := range view.Blocks {
		if b.Accessory.ActionID == "brain_revoke_connection" {
			return b.Accessory.Value
		}
	}
	t.Fatalf("no Revoke button on the Home tab of %s: %s", user, v)
	return ""
}
