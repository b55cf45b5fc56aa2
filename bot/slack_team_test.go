package bot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine/model/fakemodel"
)

// waitMessage waits until the message at channel/ts contains want.
func (sa *slackApp) waitMessage(channel, ts, want string) slackfake.Message {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, _ := sa.slack.Message(channel, ts)
		if strings.Contains(m.Text+"\n"+blockText(m.Blocks), want) {
			return m
		}
		if time.Now().After(deadline) {
			sa.t.Fatalf("%s/%s has no %q: %s", channel, ts, want, m.Blocks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitChannel waits for a top-level message in channel containing want.
func (sa *slackApp) waitChannel(channel, want string) slackfake.Message {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, m := range sa.slack.Messages(channel) {
			if strings.Contains(m.Text+string(m.Blocks), want) {
				return m
			}
		}
		if time.Now().After(deadline) {
			sa.t.Fatalf("channel %s has no %q: %+v", channel, want, sa.slack.Messages(channel))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// submit submits the last modal opened, with text in its comment field.
func (sa *slackApp) submit(user, text string) {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(sa.slack.Views()) == 0 {
		if time.Now().After(deadline) {
			sa.t.Fatal("no modal was opened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	views := sa.slack.Views()
	v := views[len(views)-1]
	body := interactionForm(map[string]any{
		"type": "view_submission", "team": map[string]any{"id": slackfake.TeamID},
		"user": map[string]any{"id": user, "team_id": slackfake.TeamID}, "trigger_id": "9.9.9",
		"view": map[string]any{"id": v.ID, "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.PrivateMetadata,
			"state": map[string]any{"values": map[string]any{"brain_comment": map[string]any{"comment": map[string]any{"type": "plain_text_input", "value": text}}}}},
	})
	if st := sa.post("/slack/interactions", "application/x-www-form-urlencoded", body); st != 200 {
		sa.t.Fatalf("submit: status %d", st)
	}
}

func TestSlack_DenyWithReasonAndApproveWithComment(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"one"}`}, fakemodel.Call{Name: "deploy", Input: `{"service":"two"}`}),
		fakemodel.Text("Proposed two."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy both", "")
	one := sa.waitThread(ts, "Deploy one")
	two := sa.waitThread(ts, "Deploy two")

	sa.click("U1", one, "brain_deny_reason")
	sa.submit("U1", "not <during> the freeze")
	sa.waitMessage("C1", one.TS, "*Reason*: not &lt;during&gt; the freeze")

	sa.click("U1", two, "brain_approve_comment")
	sa.waitSecondView()
	sa.submit("U1", "go, and watch the graphs")
	sa.waitMessage("C1", two.TS, "*Comment*: go, and watch the graphs")
	sa.waitMessage("C1", two.TS, "applied")
	if sa.applied.Load() != 1 {
		t.Fatalf("applied %d times", sa.applied.Load())
	}

	// The next turn's request carries the reason and the comment.
	sa.fake.Push(fakemodel.Text("Understood."))
	sa.message("Ev2", "app_mention", "U1", "<@"+slackfake.BotUserID+"> what now?", ts)
	sa.waitThread(ts, "Understood.")
	reqs := sa.fake.Requests()
	last := string(reqs[len(reqs)-1].Raw)
	for _, want := range []string{`reason: \"not \u003cduring\u003e the freeze\"`, `comment: \"go, and watch the graphs\"`} {
		if !strings.Contains(last, want) {
			t.Errorf("the next request lacks %s: %s", want, last)
		}
	}
}

// waitSecondView waits until two modals were opened.
func (sa *slackApp) waitSecondView() {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(sa.slack.Views()) < 2 {
		if time.Now().After(deadline) {
			sa.t.Fatal("the second modal was not opened")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSlack_CardInApproversChannelDecidedThere(t *testing.T) {
	sa := newSlackAppApprovals(t, "{ttl: 1h, notify: {slack_channel: C0APPR}}", "")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy api", "")
	inThread := sa.waitThread(ts, "Deploy api")
	inChannel := sa.waitChannel("C0APPR", "Deploy api")
	if inChannel.ThreadTS != "" {
		t.Fatalf("the approvers' copy is a reply: %+v", inChannel)
	}
	sa.click("U1", inChannel, "brain_approve")
	sa.waitMessage("C0APPR", inChannel.TS, "applied")
	sa.waitMessage("C1", inThread.TS, "applied")
	sa.click("U1", inThread, "brain_approve") // the other copy counts no more
	sa.waitEphemeral("U1", "already approved by U1")
	if sa.applied.Load() != 1 {
		t.Fatalf("applied %d times", sa.applied.Load())
	}
}

func TestSlack_TwoApproversFromDMsAndThread(t *testing.T) {
	sa := newSlackAppApprovals(t, `
  ttl: 1h
  approvers: [U1, U2, U3]
  notify: {dm_approvers: true}
  policies: [{name: two-for-deploys, tool: deploy, require: 2, forbid_self: true}]`, "")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy api", "")
	card := sa.waitThread(ts, "Deploy api")
	dms := map[string]slackfake.Message{}
	for _, u := range []string{"U1", "U2", "U3"} {
		dms[u] = sa.waitChannel(slackfake.DMChannel(u), "Deploy api")
	}
	sa.click("U1", card, "brain_approve")
	sa.waitEphemeral("U1", "may not approve their own request")
	sa.click("U2", dms["U2"], "brain_approve")
	for _, m := range dms {
		sa.waitMessage(m.Channel, m.TS, "1 of 2 approvals: U2")
	}
	sa.waitMessage("C1", card.TS, "1 of 2 approvals: U2")
	sa.click("U2", card, "brain_approve")
	sa.waitEphemeral("U2", "U2 has already approved")
	sa.click("U3", dms["U3"], "brain_approve")
	sa.waitMessage("C1", card.TS, "approved by U2 and U3 · applied")
	for _, m := range dms {
		sa.waitMessage(m.Channel, m.TS, "approved by U2 and U3 · applied")
	}
	if sa.applied.Load() != 1 {
		t.Fatalf("applied %d times", sa.applied.Load())
	}
}

func TestSlack_ReminderThenExpiredCard(t *testing.T) {
	sa := newSlackAppApprovals(t, "{ttl: 1h, remind_before: 20m, notify: {slack_channel: C0APPR}}", "")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy api", "")
	card := sa.waitThread(ts, "Deploy api")
	copyCard := sa.waitChannel("C0APPR", "Deploy api")
	sa.clock.Advance(45 * time.Minute)
	if err := sa.app.engine.RemindApprovals(context.Background()); err != nil {
		t.Fatal(err)
	}
	sa.waitThread(ts, ":alarm_clock: *Deploy api* is still waiting for a decision")
	found := false
	deadline := time.Now().Add(20 * time.Second)
	for !found && time.Now().Before(deadline) {
		for _, m := range sa.slack.Thread("C0APPR", copyCard.TS) {
			found = found || strings.Contains(m.Text, ":alarm_clock:")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !found {
		t.Fatalf("no reminder under the approvers' copy: %+v", sa.slack.Thread("C0APPR", copyCard.TS))
	}
	sa.clock.Advance(30 * time.Minute)
	if err := sa.app.engine.ExpireApprovals(context.Background()); err != nil {
		t.Fatal(err)
	}
	sa.waitMessage("C1", card.TS, "without a decision; nothing was applied")
	sa.waitMessage("C0APPR", copyCard.TS, "without a decision; nothing was applied")
	sa.click("U1", copyCard, "brain_approve")
	sa.waitEphemeral("U1", "expired")
	if sa.applied.Load() != 0 {
		t.Fatalf("applied %d times", sa.applied.Load())
	}
}

// blockText joins every string in a message's blocks, JSON escapes undone.
func blockText(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return strings.Join(out, "\n")
}

func TestSlack_FormOpensOnlyForSomeoneWhoMayDecide(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy api", "")
	card := sa.waitThread(ts, "Deploy api")
	sa.click("U2", card, "brain_deny_reason")
	sa.waitEphemeral("U2", "may not decide")
	if n := len(sa.slack.Views()); n != 0 {
		t.Fatalf("%d forms opened for someone who may not decide", n)
	}
}

func TestSlack_AutoApprovedCardSaysWhichPolicy(t *testing.T) {
	sa := newSlackAppApprovals(t, "{ttl: 1h, policies: [{name: deploys-are-routine, tool: deploy, auto_approve: true}]}", "")
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Deploying."))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy api", "")
	card := sa.waitThread(ts, "Deploy api")
	sa.waitMessage("C1", card.TS, "applied under policy deploys-are-routine")
	if m, _ := sa.slack.Message("C1", card.TS); strings.Contains(string(m.Blocks), "brain_approve") {
		t.Fatalf("an auto-approved card has buttons: %s", m.Blocks)
	}
	if sa.applied.Load() != 1 {
		t.Fatalf("applied %d times", sa.applied.Load())
	}
}
