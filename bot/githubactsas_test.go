package bot

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// ghActsAsSlackApp is brain on Slack with github_comment acting as the
// approver (GitHub App user tokens against ghOAuthFake), approvals
// decided by approvers.
func ghActsAsSlackApp(t *testing.T, g *ghOAuthFake, approvals string) *slackApp {
	t.Helper()
	more := fmt.Sprintf(`public_url: https://brain.invalid
secrets: {key_file: %s}
tools:
  github:
    token: %s
    repos: [acme/widgets]
    base_url: %s/api/v3/
    user_tokens: {client_id: %s, client_secret: %s, web_url: %s}
    acts_as: {github_comment: approver}
`, writeKeyFile(t, genKey(t)), ghAppToken, g.srv.URL, g.clientID, g.clientSecret, g.srv.URL)
	return newSlackAppConfig(t, "anthropic", "    tools: [ask, deploy, github_comment]\n", "", approvals, more)
}

// linkPerson makes a person with identities ("surface:id").
func linkPerson(t *testing.T, sa *slackApp, person string, ids ...string) {
	t.Helper()
	sa.must(http.StatusOK, "POST", "/v1/people", map[string]any{"id": person}, nil)
	for _, id := range ids {
		surface, ext, _ := strings.Cut(id, ":")
		sa.must(http.StatusOK, "POST", "/v1/people/"+person+"/identities", map[string]any{"surface": surface, "external_id": ext}, nil)
	}
}

// followGitHub runs a GitHub connect link in a browser approving as
// login, through brain's callback.
func followGitHub(t *testing.T, sa *slackApp, link, login string) {
	t.Helper()
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(link + "&login=" + url.QueryEscape(login))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := resp.Location()
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := sa.do("GET", "/oauth/callback?"+back.RawQuery, nil)
	if code != http.StatusOK || !strings.Contains(string(body), "Connected github") {
		t.Fatalf("callback: %d %s", code, body)
	}
}

// waitApproval waits until the session's only approval has one of the
// statuses.
func (sa *slackApp) waitApproval(id string, want ...engine.ApprovalStatus) engine.Approval {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got engine.Approval
		sa.must(http.StatusOK, "GET", "/v1/approvals/"+id, nil, &got)
		for _, w := range want {
			if got.Status == w {
				return got
			}
		}
		if time.Now().After(deadline) {
			sa.t.Fatalf("approval %s is %s, want %v", id, got.Status, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (sa *slackApp) onlyPending() engine.Approval {
	sa.t.Helper()
	var list struct{ Approvals []engine.Approval }
	sa.must(http.StatusOK, "GET", "/v1/approvals?status=pending", nil, &list)
	if len(list.Approvals) != 1 {
		sa.t.Fatalf("pending approvals: %+v", list.Approvals)
	}
	return list.Approvals[0]
}

// TestGitHubActsAs_ApproverWritesWithBobsToken is issue 27's proof: Alice
// asks in Slack, the model proposes a GitHub comment, Bob (an approver
// named person:bob) approves, and the fake GitHub sees the write with
// Bob's user token, not Alice's nor the App's. Before Bob connected, the
// apply is a tool error that sent nothing, and Bob alone got the link.
func TestGitHubActsAs_ApproverWritesWithBobsToken(t *testing.T) {
	g := newGHOAuthFake(t)
	sa := ghActsAsSlackApp(t, g, "{ttl: 1h, approvers: [person:bob]}")
	linkPerson(t, sa, "alice", "slack:UALICE")
	linkPerson(t, sa, "bob", "slack:UBOB")
	var link struct{ URL string }
	sa.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": "github", "person": "alice"}, &link)
	followGitHub(t, sa, link.URL, "alice-gh")

	comment := `{"repo":"acme/widgets","number":12,"body":"Fixed in 1.4.2"}`
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "github_comment", Input: comment}), fakemodel.Text("Proposed the comment."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> tell them it is fixed", "")
	card := sa.waitThread(root, "brain_approve")
	first := sa.onlyPending()
	// The card was read as the App: the requester's token is not needed
	// to propose a write someone else applies.
	if _, calls := g.written(); strings.Join(calls, ",") != "GET /api/v3/repos/acme/widgets/issues/12 as app" {
		t.Fatalf("preview calls %v, want one read as the app", calls)
	}

	// Bob approves without a GitHub connection: nothing is sent, Bob gets
	// the connect button (only he), the apply fails saying so.
	sa.click("UBOB", card, "brain_approve")
	failed := sa.waitApproval(first.ID, engine.ApprovalFailed)
	if !strings.Contains(failed.Error, "nothing was sent") || !strings.Contains(failed.Error, "UBOB") || !strings.Contains(failed.Error, "sent them a link") {
		t.Fatalf("apply error %q: want nothing sent, Bob named, a link sent", failed.Error)
	}
	if written, _ := g.written(); len(written) != 0 {
		t.Fatalf("comments written without Bob's connection: %+v", written)
	}
	m := sa.ephemeralTo("UBOB", "Connect github")
	for _, e := range sa.slack.Ephemerals() {
		if e.User != "UBOB" && strings.Contains(string(e.Blocks), "brain_connect") {
			t.Fatalf("a connect link went to %s", e.User)
		}
	}
	followGitHub(t, sa, linkURL(t, m), "bob-gh")
	sa.waitThread(root, "connected *github*")

	// Asked again, approved by Bob: the comment lands as bob-gh.
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "github_comment", Input: comment}), fakemodel.Text("Proposed it again."))
	sa.message("Ev2", "message", "UALICE", "try again please", root)
	sa.waitThread(root, "Proposed it again.")
	second := sa.onlyPending()
	var card2 = sa.cardOf(root, second.ID)
	sa.click("UBOB", card2, "brain_approve")
	done := sa.waitApproval(second.ID, engine.ApprovalApplied, engine.ApprovalFailed)
	if done.Status != engine.ApprovalApplied {
		t.Fatalf("apply: %s %s", done.Status, done.Error)
	}
	written, calls := g.written()
	if len(written) != 1 || written[0].as != "bob-gh" || !strings.Contains(written[0].body, "Fixed in 1.4.2") {
		t.Fatalf("comments %+v, want one by bob-gh", written)
	}
	for _, c := range calls {
		if strings.HasPrefix(c, "POST ") && !strings.HasSuffix(c, " as bob-gh") {
			t.Fatalf("a write went as someone else than Bob: %v", calls)
		}
	}

	// Half a year on, Bob's refresh token has expired (GitHub's
	// refresh_token_expires_in): the next apply acting as him sends
	// nothing, says why, and sends him a new connect link.
	sa.clock.Advance(190 * 24 * time.Hour)
	links := countConnectLinks(sa, "UBOB")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "github_comment", Input: comment}), fakemodel.Text("Proposed a third time."))
	sa.message("Ev3", "message", "UALICE", "once more", root)
	sa.waitThread(root, "Proposed a third time.")
	third := sa.onlyPending()
	sa.click("UBOB", sa.cardOf(root, third.ID), "brain_approve")
	expired := sa.waitApproval(third.ID, engine.ApprovalFailed)
	if !strings.Contains(expired.Error, "refresh token expired") || !strings.Contains(expired.Error, "nothing was sent") {
		t.Fatalf("apply after the refresh token expired: %q", expired.Error)
	}
	if written, _ := g.written(); len(written) != 1 {
		t.Fatalf("comments %+v after the expiry, want still one", written)
	}
	if countConnectLinks(sa, "UBOB") != links+1 {
		t.Fatal("Bob got no new connect link")
	}

	logs := sa.logs.String()
	if strings.Contains(logs, "ghu_") || strings.Contains(logs, "ghr_") {
		t.Fatal("a GitHub user token reached the log")
	}
	for _, res := range sa.toolResults(sa.session(root).ID) {
		if strings.Contains(res, "ghu_") {
			t.Fatal("a GitHub user token reached the model")
		}
	}
}

// countConnectLinks counts the connect buttons sent to user.
func countConnectLinks(sa *slackApp, user string) int {
	n := 0
	for _, e := range sa.slack.Ephemerals() {
		if e.User == user && strings.Contains(string(e.Blocks), "brain_connect") {
			n++
		}
	}
	return n
}

// cardOf is the approval card of approval id in the thread.
func (sa *slackApp) cardOf(threadTS, id string) (card slackfake.Message) {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, m := range sa.slack.Thread("C1", threadTS) {
			if strings.Contains(string(m.Blocks), "brain_approve") && strings.Contains(string(m.Blocks), id) {
				return m
			}
		}
		if time.Now().After(deadline) {
			sa.t.Fatalf("no card for %s in %s", id, threadTS)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlack_ApproverPersonOneVoteAcrossSurfaces: an approvers list that
// names people on Slack: Bob's Slack click and Bob's vote through the API
// (another identity of the same person) count once; Carol's makes two,
// and the write applies once.
func TestSlack_ApproverPersonOneVoteAcrossSurfaces(t *testing.T) {
	sa := newSlackAppApprovals(t, `{ttl: 1h, approvers: [person:bob, person:carol],
  policies: [{name: two, tool: deploy, require: 2}]}`, "")
	linkPerson(t, sa, "bob", "slack:UBOB", "api:bob-api")
	linkPerson(t, sa, "carol", "slack:UCAROL")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"web"}`}), fakemodel.Text("Proposed the deploy."))
	root := sa.message("Ev1", "app_mention", "UALICE", "<@UBOT> deploy web", "")
	card := sa.waitThread(root, "brain_approve")
	a := sa.onlyPending()

	// Alice is no approver: refused.
	sa.click("UALICE", card, "brain_approve")
	sa.waitEphemeral("UALICE", "may not decide this approval")
	sa.click("UBOB", card, "brain_approve")
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got engine.Approval
		sa.must(http.StatusOK, "GET", "/v1/approvals/"+a.ID, nil, &got)
		if len(got.Votes) == 1 {
			if got.Votes[0].Person != "bob" {
				t.Fatalf("vote %+v, want Bob's as person bob", got.Votes[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Bob's Slack vote was not recorded: %+v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	status, _, body := sa.do("POST", "/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "approve", "by": "bob-api"})
	if status != http.StatusConflict || !strings.Contains(string(body), "one person is one vote") {
		t.Fatalf("Bob again through the API: %d %s", status, body)
	}
	// Bob clicking again on Slack is refused too.
	sa.click("UBOB", sa.cardOf(root, a.ID), "brain_approve")
	sa.waitEphemeral("UBOB", "already approved")
	if sa.applied.Load() != 0 {
		t.Fatal("applied on one person's votes")
	}
	sa.click("UCAROL", sa.cardOf(root, a.ID), "brain_approve")
	got := sa.waitApproval(a.ID, engine.ApprovalApplied)
	if len(got.Votes) != 2 || got.Votes[1].Person != "carol" || sa.applied.Load() != 1 {
		t.Fatalf("approval %+v applied %d times", got, sa.applied.Load())
	}
}
