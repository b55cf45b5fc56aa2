package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/internal/gittest"
	"brain/store"
	"brain/tools/sandbox"
)

// TestSlack_CodeChannel: a mention starts a coding task; its first clone
// opens a code channel for the session, once, although Slack's answer to
// the creation is lost the first time (brain never stored it: the retry
// carries the same session id and finds the same channel); the thread
// gets a link; the rest of the work happens in the channel: a message
// there without a mention reaches the same session, the proposed change
// shows as the channel's diff view with its card (Approve/Deny) in the
// channel, and once approved the context bar shows the pull request and
// its checks and the channel is archived with a summary.
func TestSlack_CodeChannel(t *testing.T) {
	if os.Getenv("BRAIN_SKIP_BWRAP") == "1" {
		t.Skip("BRAIN_SKIP_BWRAP=1")
	}
	git := gittest.New(t, "ghs_read_slack", "ghs_write_slack_0123456789")
	git.Create(t, "acme/widgets", map[string]string{
		"widgets.go": "package widgets\n\nfunc Greeting() string { return \"hi\" }\n",
	})
	pulls, ghURL := newPullsFake(t)
	more := fmt.Sprintf("tools:\n  sandbox_exec: {timeout_seconds: 60}\n  github: {token: %s, base_url: %s, git_url: %s, repos: [acme/*]}\n",
		git.WriteToken, ghURL, git.URL)
	sa := newSlackAppConfig(t, "anthropic", "    tools: [sandbox_exec, github_propose_change]\n",
		"  code_channels: {enabled: true}\n", "{ttl: 1h}", more)
	// Slack creates the channel, and its answer is lost: a crash between
	// Slack's work and brain's record looks the same to brain.
	sa.slack.FailAfter("agents.conversations.create", 1, "internal_error")

	cloned := make(chan error, 1)
	sa.fake.Push(
		fakemodel.Func(func(fakemodel.Request) fakemodel.Step {
			// The clone through the sandbox's proxy is
			// TestServe_ProposeChangeEndToEnd's; here it lands in the
			// workspace from the host and the command only clones when
			// it is missing.
			cloned <- cloneIntoSlack(sa, git)
			return fakemodel.ToolCalls(fakemodel.Call{Name: "sandbox_exec", Input: `{"command":"set -e; ` +
				`test -d widgets || git clone https://github.com/acme/widgets.git widgets; cd widgets; ` +
				`sed -i 's/\"hi\"/\"hello\"/' widgets.go; ` +
				`git -c user.name=agent -c user.email=agent@example.com commit -qam 'Say hello'"}`})
		}),
		fakemodel.Text("Committed the greeting change. Shall I propose it?"),
		fakemodel.ToolCalls(fakemodel.Call{Name: "github_propose_change",
			Input: `{"repo":"acme/widgets","path":"/workspace/widgets","base":"main","title":"Say hello","body":"As asked in Slack."}`}),
		fakemodel.Text("Proposed; waiting for approval."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> make the greeting say hello", "")
	if err := <-cloned; err != nil {
		t.Fatal(err)
	}
	s := sa.session(ts)
	link := sa.waitThread(ts, "This task continues in <#")
	cc := waitCodeChannel(t, sa, s.ID, store.CodeChannelOpen)
	if !strings.Contains(link.Text+string(link.Blocks), cc.Channel) {
		t.Fatalf("the thread's link %q does not name %s", link.Text, cc.Channel)
	}
	channels := sa.slack.CodeChannels()
	if len(channels) != 1 || channels[0].ID != cc.Channel || channels[0].SessionID != s.ID ||
		channels[0].OriginChannel != "C1" || channels[0].OriginTS != ts {
		t.Fatalf("code channels %+v, want one for session %s from C1 %s", channels, s.ID, ts)
	}
	if n := len(sa.slack.Calls("agents.conversations.create")); n != 2 {
		t.Fatalf("%d creations, want 2 (the lost answer and its retry)", n)
	}

	// The reply of the turn is in the channel, at its top level.
	reply := waitChannel(t, sa, cc.Channel, "Shall I propose it?")
	if reply.ThreadTS != "" {
		t.Fatalf("reply in a thread of the channel: %+v", reply)
	}
	waitFor(t, "the repository in the context bar", func() bool {
		c, _ := sa.slack.CodeChannel(cc.Channel)
		return len(c.ContextBar) > 0 && c.ContextBar[0].Label == "acme/widgets"
	})

	// A message in the channel, without a mention, is the session's input.
	channelMessage(t, sa, "Ev2", cc.Channel, "U1", "yes, propose it")
	card := waitChannel(t, sa, cc.Channel, "Propose a pull request to acme/widgets")
	heard := false
	for _, ev := range sa.events(s.ID) {
		heard = heard || ev.Type == engine.EventUserMessage && strings.Contains(string(ev.Data), "yes, propose it")
	}
	if !heard {
		t.Fatal("the channel's message did not reach the session")
	}
	view, _ := sa.slack.CodeChannel(cc.Channel)
	if !strings.HasPrefix(view.Diff, "diff --git") || !strings.Contains(view.Diff, "+func Greeting() string { return \"hello\" }") || view.DiffBase != "main" {
		t.Fatalf("diff view %q (base %q), want the proposed diff", view.Diff, view.DiffBase)
	}
	if st := sa.slack.AgentStatus(cc.Channel, ""); st != "processing" && st != "active" {
		t.Fatalf("channel status %q", st)
	}

	sa.click("U1", card, "brain_approve")
	waitFor(t, "the pull request in the context bar", func() bool {
		c, _ := sa.slack.CodeChannel(cc.Channel)
		for _, it := range c.ContextBar {
			if it.Key == "pr" && it.URL == "https://github.com/acme/widgets/pull/1" {
				return true
			}
		}
		return false
	})
	done := waitCodeChannel(t, sa, s.ID, store.CodeChannelArchived)
	archived, _ := sa.slack.CodeChannel(cc.Channel)
	if !archived.Archived || sa.slack.AgentStatus(cc.Channel, "") != "closed" {
		t.Fatalf("channel archived %v, status %q", archived.Archived, sa.slack.AgentStatus(cc.Channel, ""))
	}
	var keys []string
	for _, it := range archived.ContextBar {
		keys = append(keys, it.Key)
	}
	if strings.Join(keys, ",") != "repo,branch,pr,checks" {
		t.Fatalf("context bar %+v", archived.ContextBar)
	}
	waitChannel(t, sa, cc.Channel, "Pull request opened")
	if calls := sa.slack.Calls("agents.conversations.archive"); len(calls) != 1 || calls[0].Params.Get("summary_message_ts") == "" {
		t.Fatalf("archive calls %+v, want one with the summary", calls)
	}
	if pulls.count() != 1 || len(sa.slack.CodeChannels()) != 1 || done.Channel != cc.Channel {
		t.Fatalf("%d pull requests, %d code channels", pulls.count(), len(sa.slack.CodeChannels()))
	}
	// Nothing of the work but the link went to the thread.
	for _, m := range sa.slack.Thread("C1", ts) {
		if strings.Contains(m.Text+string(m.Blocks), "Propose a pull request") {
			t.Fatalf("the card was posted in the thread: %+v", m)
		}
	}
}

// TestSlack_CodeChannelRefused: a workspace without code channels keeps
// the session in its thread; brain asks once per session.
func TestSlack_CodeChannelRefused(t *testing.T) {
	sa := newSlackAppConfig(t, "anthropic", "    tools: [github_propose_change, deploy]\n",
		"  code_channels: {enabled: true}\n", "{ttl: 1h}",
		"tools:\n  sandbox_exec: {}\n  github: {token: ghp_x, base_url: http://127.0.0.1:1/, repos: [acme/*]}\n")
	sa.slack.Fail("agents.conversations.create", -1, "missing_scope")
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "github_propose_change",
			Input: `{"repo":"acme/widgets","path":"/workspace/widgets","base":"main","title":"x"}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "github_propose_change",
			Input: `{"repo":"acme/widgets","path":"/workspace/widgets","base":"main","title":"y"}`}),
		fakemodel.Text("That did not work; the repository is not in my workspace."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> propose it", "")
	sa.waitThread(ts, "the repository is not in my workspace")
	cc := waitCodeChannel(t, sa, sa.session(ts).ID, store.CodeChannelUnavailable)
	if cc.Channel != "" || len(sa.slack.CodeChannels()) != 0 {
		t.Fatalf("code channel %+v", cc)
	}
	if n := len(sa.slack.Calls("agents.conversations.create")); n != 1 {
		t.Fatalf("%d creations, want 1", n)
	}
}

func waitCodeChannel(t *testing.T, sa *slackApp, sessionID, state string) store.CodeChannel {
	t.Helper()
	var cc store.CodeChannel
	waitFor(t, "code channel "+state, func() bool {
		got, ok, err := sa.app.store.CodeChannel(context.Background(), sessionID)
		cc = got
		return err == nil && ok && got.State == state
	})
	return cc
}

func waitChannel(t *testing.T, sa *slackApp, channel, want string) slackfake.Message {
	t.Helper()
	var found slackfake.Message
	waitFor(t, fmt.Sprintf("a message with %q in %s", want, channel), func() bool {
		for _, m := range sa.slack.Messages(channel) {
			if strings.Contains(m.Text+string(m.Blocks), want) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// channelMessage posts a top-level message event in channel.
func channelMessage(t *testing.T, sa *slackApp, eventID, channel, user, text string) {
	t.Helper()
	ts := fmt.Sprintf("%d.000100", sa.nextTS.Add(1))
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": eventID, "event_time": 1,
		"event": map[string]any{"type": "message", "channel_type": "channel", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts},
	})
	if st := sa.post("/slack/events", "application/json", body); st != 200 {
		t.Fatalf("event %s: status %d", eventID, st)
	}
}

// cloneIntoSlack clones acme/widgets into the workspace of the Slack
// session of the test's first mention (its ts is the first sa.message
// makes).
func cloneIntoSlack(sa *slackApp, git *gittest.Server) error {
	s, err := sa.app.store.SessionByThread(context.Background(), "slack:"+slackfake.TeamID+":C1:1700000001.000100")
	if err != nil {
		return err
	}
	ws := sandbox.WorkspaceDir(filepath.Join(sa.app.cfg.DataDir, "sandboxes"), s.ID)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	u := strings.Replace(git.URL, "http://", "http://x:"+git.ReadToken+"@", 1) + "/acme/widgets.git"
	if out, err := gitCmd(ws, "clone", "-q", u, "widgets"); err != nil {
		return fmt.Errorf("clone: %v: %s", err, out)
	}
	if out, err := gitCmd(filepath.Join(ws, "widgets"), "remote", "set-url", "origin", "https://github.com/acme/widgets.git"); err != nil {
		return fmt.Errorf("set-url: %v: %s", err, out)
	}
	return nil
}

// TestSlack_CodeChannelArchivedByAPerson: a channel someone archived in
// Slack refuses posts (is_archived); the session goes back to its thread
// with the reply that found it archived, instead of retrying for ever.
func TestSlack_CodeChannelArchivedByAPerson(t *testing.T) {
	if os.Getenv("BRAIN_SKIP_BWRAP") == "1" {
		t.Skip("BRAIN_SKIP_BWRAP=1")
	}
	sa := newSlackAppConfig(t, "anthropic", "    tools: [sandbox_exec]\n",
		"  code_channels: {enabled: true}\n", "{ttl: 1h}", "tools:\n  sandbox_exec: {timeout_seconds: 60}\n")
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "sandbox_exec", Input: `{"command":"echo would run: git clone https://github.com/acme/widgets.git"}`}),
		fakemodel.Text("Looked at it."),
		fakemodel.Text("Back in the thread."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> look at widgets", "")
	s := sa.session(ts)
	cc := waitCodeChannel(t, sa, s.ID, store.CodeChannelOpen)
	waitChannel(t, sa, cc.Channel, "Looked at it.")
	if !sa.slack.ArchiveCodeChannel(cc.Channel) {
		t.Fatal("no such code channel in the fake")
	}
	sa.message("Ev2", "app_mention", "U1", "<@"+slackfake.BotUserID+"> and now?", ts)
	sa.waitThread(ts, "Back in the thread.")
	waitCodeChannel(t, sa, s.ID, store.CodeChannelArchived)
}
