package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/slackbridge"
	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
	"brain/webhooks/slackhook"
)

const signingSecret = "slack-signing-secret-for-tests"

// slackApp is a brain with Slack on, talking to the fake Slack Web API
// (test double) through the real slack-go client.
type slackApp struct {
	*testApp
	slack   *slackfake.Server
	clock   *slackClock
	applied atomic.Int64
	nextTS  atomic.Int64
}

// slackClock is a settable clock; it starts at the wall time so Slack
// signatures made with it are fresh.
type slackClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *slackClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *slackClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

func newSlackApp(t *testing.T) *slackApp {
	t.Helper()
	return newSlackAppWith(t, "")
}

// newSlackAppWith adds top-level YAML (e.g. schedules) to the config.
func newSlackAppWith(t *testing.T, more string) *slackApp {
	t.Helper()
	return newSlackAppFor(t, "anthropic", "", "", more)
}

// newSlackAppApprovals is newSlackAppWith with the approvals block given.
func newSlackAppApprovals(t *testing.T, approvals, more string) *slackApp {
	t.Helper()
	return newSlackAppConfig(t, "anthropic", "", "", approvals, more)
}

// newSlackAppAgent adds YAML to the agent's config (indented four spaces)
// and top-level YAML.
func newSlackAppAgent(t *testing.T, agent, more string) *slackApp {
	t.Helper()
	return newSlackAppConfig(t, "anthropic", agent, "", "{ttl: 1h}", more)
}

// newSlackAppFor is newSlackAppWith with the model's provider, YAML lines
// added to the agent (indented 4) and to the slack block (indented 2).
func newSlackAppFor(t *testing.T, provider, agentMore, slackMore, more string) *slackApp {
	t.Helper()
	return newSlackAppConfig(t, provider, agentMore, slackMore, "{ttl: 1h}", more)
}

// newSlackAppConfig is newSlackAppFor with the approvals block given.
func newSlackAppConfig(t *testing.T, provider, agentMore, slackMore, approvals, more string) *slackApp {
	t.Helper()
	sa := &slackApp{slack: slackfake.New(), clock: &slackClock{}}
	t.Cleanup(func() {
		sa.slack.Close()
		recordSlack(t, sa.slack)
	})
	deploy := tools.Definition{
		Name: "deploy", Description: "Deploy a service",
		Input: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}`),
		Preview: func(ctx context.Context, c tools.Call) (tools.Card, error) {
			var in struct{ Service string }
			_ = json.Unmarshal(c.Input, &in)
			return tools.Card{Title: "Deploy " + in.Service, Facts: []tools.Fact{{Label: "Service", Value: in.Service}}}, nil
		},
		Apply: func(ctx context.Context, c tools.Call, d tools.Decision) (json.RawMessage, error) {
			sa.applied.Add(1)
			return json.RawMessage(`{"deployed":true}`), nil
		},
	}
	// lookup takes a secret-looking argument that must never show in Slack.
	lookup := tools.Definition{
		Name: "lookup", Description: "Look something up",
		Input: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"token":{"type":"string"}}}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return json.RawMessage(`"found 3 rows\nmore detail"`), nil
		},
	}
	// agentMore may name the agent's tools itself (MCP servers among them).
	toolsLine := "    tools: [ask, deploy, lookup, plan]\n"
	if strings.HasPrefix(agentMore, "    tools:") {
		toolsLine = ""
	}
	extra := fmt.Sprintf(toolsLine+`%sslack:
  bot_token: %s
  signing_secret: %s
  api_url: %s/api/
%sapprovals: %s
`, agentMore, slackfake.BotToken, signingSecret, sa.slack.URL(), slackMore, approvals) + more
	sa.testApp = newTestAppFor(t, provider, extra, Options{Tools: []tools.Definition{deploy, lookup}, Clock: sa.clock.Now})
	sa.nextTS.Store(1700000000)
	return sa
}

// post sends a signed request to a Slack endpoint.
func (sa *slackApp) post(path, contentType string, body []byte, hdr ...string) int {
	sa.t.Helper()
	switch path {
	case "/slack/events":
		slackContract.RecordEvent(body)
	case "/slack/interactions":
		slackContract.RecordInteraction(body)
	}
	req, _ := http.NewRequest("POST", sa.base+path, bytes.NewReader(body))
	ts := strconv.FormatInt(sa.clock.Now().Unix(), 10)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(slackhook.HeaderTimestamp, ts)
	req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, ts, body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		sa.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// message posts a message event and returns its ts.
func (sa *slackApp) message(eventID, eventType, user, text, threadTS string, hdr ...string) string {
	sa.t.Helper()
	ts := fmt.Sprintf("%d.000100", sa.nextTS.Add(1))
	return sa.messageAt(eventID, eventType, user, text, ts, threadTS, hdr...)
}

func (sa *slackApp) messageAt(eventID, eventType, user, text, ts, threadTS string, hdr ...string) string {
	sa.t.Helper()
	ev := map[string]any{"type": eventType, "user": user, "text": text, "ts": ts, "channel": "C1", "event_ts": ts}
	if eventType == "message" { // an app_mention carries no channel_type (@slack/types' AppMentionEvent)
		ev["channel_type"] = "channel"
	}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": eventID, "event_time": 1, "event": ev,
	})
	if st := sa.post("/slack/events", "application/json", body, hdr...); st != 200 {
		sa.t.Fatalf("event %s: status %d", eventID, st)
	}
	return ts
}

// click presses a button of a posted message.
func (sa *slackApp) click(user string, msg slackfake.Message, actionID string) {
	sa.t.Helper()
	value := buttonValue(sa.t, msg, actionID)
	body := interactionForm(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": user, "team_id": slackfake.TeamID},
		"team": map[string]any{"id": slackfake.TeamID}, "channel": map[string]any{"id": msg.Channel},
		"container":    map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel, "thread_ts": msg.ThreadTS},
		"response_url": "https://hooks.slack.invalid/x", "trigger_id": "1.2." + msg.TS,
		"actions": []map[string]any{{"action_id": actionID, "block_id": "b", "value": value, "type": "button",
			"action_ts": fmt.Sprintf("%d.5", sa.nextTS.Add(1))}},
	})
	if st := sa.post("/slack/interactions", "application/x-www-form-urlencoded", body); st != 200 {
		sa.t.Fatalf("click: status %d", st)
	}
}

// buttonValue finds the value of the first button with actionID.
func buttonValue(t testing.TB, msg slackfake.Message, actionID string) string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(msg.Blocks, &blocks)
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return e.Value
			}
		}
	}
	t.Fatalf("no %s button in %s", actionID, msg.Blocks)
	return ""
}

// waitThread waits until the thread has a message containing want.
func (sa *slackApp) waitThread(threadTS, want string) slackfake.Message {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, m := range sa.slack.Thread("C1", threadTS) {
			if strings.Contains(m.Text+string(m.Blocks), want) {
				return m
			}
		}
		if time.Now().After(deadline) {
			sa.t.Fatalf("thread %s has no message with %q: %+v", threadTS, want, sa.slack.Thread("C1", threadTS))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitEphemeral waits for an ephemeral notice to user containing want.
func (sa *slackApp) waitEphemeral(user, want string) {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, m := range sa.slack.Ephemerals() {
			if m.User == user && strings.Contains(m.Text+string(m.Blocks), want) {
				return
			}
		}
		if time.Now().After(deadline) {
			sa.t.Fatalf("no ephemeral for %s with %q: %+v", user, want, sa.slack.Ephemerals())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (sa *slackApp) session(threadTS string) engine.Session {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := sa.app.store.SessionByThread(context.Background(), "slack:"+slackfake.TeamID+":C1:"+threadTS)
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			sa.t.Fatalf("no session for thread %s", threadTS)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSlack_MentionRepliesInThreadOnce(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.Text("Hello from **brain**."))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> hello", "")
	// The same mention as a message event, and a retry of the first delivery.
	sa.messageAt("Ev2", "message", "U1", "<@"+slackfake.BotUserID+"> hello", ts, "")
	sa.messageAt("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> hello", ts, "", slackhook.HeaderRetryNum, "1", slackhook.HeaderRetryReason, "http_timeout")
	reply := sa.waitThread(ts, "Hello from **brain**.")
	if reply.ThreadTS != ts {
		t.Fatalf("reply not in the thread: %+v", reply)
	}
	s := sa.session(ts)
	_, evs := sa.waitTurns(s.ID, 1)
	if countType(evs, engine.EventUserMessage) != 1 || sa.fake.Received() != 1 {
		t.Fatalf("%d inputs, %d model calls", countType(evs, engine.EventUserMessage), sa.fake.Received())
	}
	if s.StartedBy != "U1" || s.Origin != engine.OriginSlack {
		t.Fatalf("session %+v", s)
	}
	// A reply in the thread continues the session without a mention.
	sa.fake.Push(fakemodel.Text("Second answer."))
	sa.message("Ev3", "message", "U1", "and more?", ts)
	sa.waitThread(ts, "Second answer.")
	if sa.session(ts).ID != s.ID {
		t.Fatal("the reply started another session")
	}
	// A top-level message without a mention is not for us.
	sa.message("Ev4", "message", "U1", "just chatting", "")
	time.Sleep(50 * time.Millisecond)
	if n := sa.fake.Received(); n != 2 {
		t.Fatalf("model called %d times", n)
	}
}

func TestSlack_ForgedAndStaleSignaturesStoreNothing(t *testing.T) {
	sa := newSlackApp(t)
	body := []byte(`{"type":"event_callback","team_id":"T0FAKE","event_id":"EvX","event":{"type":"app_mention","user":"U1","text":"hi","ts":"1.0","channel":"C1"}}`)
	for name, ts := range map[string]int64{"forged": time.Now().Unix(), "stale": time.Now().Add(-10 * time.Minute).Unix()} {
		req, _ := http.NewRequest("POST", sa.base+"/slack/events", bytes.NewReader(body))
		tss := strconv.FormatInt(ts, 10)
		req.Header.Set(slackhook.HeaderTimestamp, tss)
		secret := signingSecret
		if name == "forged" {
			secret = "wrong-secret"
		}
		req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(secret, tss, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("%s: status %d", name, resp.StatusCode)
		}
	}
	pending, _ := sa.app.store.PendingInbound(context.Background(), slackbridge.InboxSource, 10)
	sessions, _ := sa.app.engine.Sessions(context.Background(), engine.SessionFilter{})
	if len(pending) != 0 || len(sessions) != 0 {
		t.Fatalf("stored: %d inbox items, %d sessions", len(pending), len(sessions))
	}
}

func TestSlack_QuestionButtons(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(
		fakemodel.TextAndTools("I need to know.", fakemodel.Call{Name: "ask", Input: `{"text":"Which env?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`}),
		fakemodel.Text("Deploying to staging."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy", "")
	q := sa.waitThread(ts, "Which env?")
	sa.click("U2", q, "brain_answer")
	sa.waitEphemeral("U2", "Only <@U1> can answer")
	s := sa.session(ts)
	if got, _ := sa.app.engine.Session(context.Background(), s.ID); got.Status != engine.StatusAwaitingInput {
		t.Fatalf("a stranger's click answered: %s", got.Status)
	}
	sa.click("U1", q, "brain_answer")
	sa.waitThread(ts, "Deploying to staging.")
	closed, _ := sa.slack.Message("C1", q.TS)
	if !strings.Contains(string(closed.Blocks), `Answered by \u003c@U1\u003e: *Staging*`) || strings.Contains(string(closed.Blocks), `"action_id":"brain_answer"`) {
		t.Fatalf("buttons not replaced: %s", closed.Blocks)
	}
	// Clicking the old button again is a stale click.
	sa.click("U1", q, "brain_answer")
	sa.waitEphemeral("U1", "already closed")
}

func TestSlack_ApprovalCard(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}),
		fakemodel.Text("Proposed."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy api", "")
	card := sa.waitThread(ts, "Deploy api")
	sa.click("U2", card, "brain_approve")
	sa.waitEphemeral("U2", "may not decide")
	if sa.applied.Load() != 0 {
		t.Fatal("unauthorized click applied")
	}
	sa.click("U1", card, "brain_approve")
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, _ := sa.slack.Message("C1", card.TS)
		if strings.Contains(string(m.Blocks), "applied") {
			if strings.Contains(string(m.Blocks), "brain_approve") {
				t.Fatalf("decided card still has buttons: %s", m.Blocks)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("card not updated: %s", m.Blocks)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sa.click("U1", card, "brain_deny") // double click on the old card
	sa.waitEphemeral("U1", "already approved by U1")
	if sa.applied.Load() != 1 {
		t.Fatalf("applied %d times", sa.applied.Load())
	}
}

func TestSlack_DenyAndExpiredCard(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"one"}`}, fakemodel.Call{Name: "deploy", Input: `{"service":"two"}`}),
		fakemodel.Text("Proposed two."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> deploy both", "")
	one := sa.waitThread(ts, "Deploy one")
	two := sa.waitThread(ts, "Deploy two")
	sa.click("U1", one, "brain_deny")
	sa.waitThread(ts, "denied by")
	sa.clock.Advance(2 * time.Hour)
	if err := sa.app.engine.ExpireApprovals(context.Background()); err != nil {
		t.Fatal(err)
	}
	sa.waitThread(ts, "expired")
	sa.click("U1", two, "brain_approve")
	sa.waitEphemeral("U1", "expired")
	if sa.applied.Load() != 0 {
		t.Fatal("applied")
	}
}

func TestSlack_ErrorResumeButtonAndResumeByMessage(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.Fail(503, "overloaded"))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> hi", "")
	errMsg := sa.waitThread(ts, "provider_unavailable")
	if strings.Contains(errMsg.Text, "goroutine") {
		t.Fatal("stack trace in Slack")
	}
	s := sa.session(ts)
	sa.click("U1", errMsg, "brain_resume")
	sa.waitEphemeral("U1", "Resumed")
	// Resume retries the unanswered "hi": wait for that turn to end.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := sa.app.engine.Session(context.Background(), s.ID)
		if got.Status == engine.StatusIdle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s after resume, want idle once the retried message ran", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Fail again, then a plain reply resumes and continues.
	sa.fake.Push(fakemodel.Fail(503, "overloaded again"), fakemodel.Text("Back."))
	sa.message("Ev2", "message", "U1", "try", ts)
	sa.waitThread(ts, "overloaded again")
	sa.message("Ev3", "message", "U1", "once more", ts)
	sa.waitThread(ts, "Back.")
}

func TestSlack_DirectMessage(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.Text("Hi in private."))
	ts := fmt.Sprintf("%d.000100", sa.nextTS.Add(1))
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": "EvDM",
		"event": map[string]any{"type": "message", "user": "U1", "text": "hello", "ts": ts, "event_ts": ts, "channel": "D1", "channel_type": "im"},
	})
	if st := sa.post("/slack/events", "application/json", body); st != 200 {
		t.Fatal(st)
	}
	// The reply streams, so its first words may show before the rest.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := sa.slack.Thread("D1", ts)
		if len(got) > 0 && strings.Contains(got[len(got)-1].Text, "Hi in private.") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no full reply to the DM: %+v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSlack_LoadWaitsInTheInboxInsteadOfFailing(t *testing.T) {
	fakeSlack := slackfake.New()
	defer recordSlack(t, fakeSlack)
	defer fakeSlack.Close()
	sa := &slackApp{slack: fakeSlack, clock: &slackClock{}}
	extra := fmt.Sprintf("slack: {bot_token: xoxb-t, signing_secret: %s, api_url: %s/api/}\nlimits: {max_running_turns: 1, max_queued_turns: 1}\n", signingSecret, fakeSlack.URL())
	sa.testApp = newTestApp(t, extra, Options{Clock: sa.clock.Now})
	sa.nextTS.Store(1700000000)
	sa.fake.Push(fakemodel.Hold())
	var threads []string
	for i := range 4 {
		threads = append(threads, sa.message(fmt.Sprintf("EvL%d", i), "app_mention", "U1", "<@"+slackfake.BotUserID+"> job", ""))
	}
	// Every event was acknowledged with 200 (checked in message); the first
	// turn holds the only slot, so the rest wait. Release frees only a
	// request that has taken the Hold: wait for it to arrive.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := sa.fake.WaitRequests(ctx, 1); err != nil {
		t.Fatalf("the first turn's model call did not arrive: %v", err)
	}
	sa.fake.Release()
	for _, ts := range threads {
		sa.waitThread(ts, "echo: job")
	}
}

func TestSlack_ScheduledRunPostsOutcomeAndRepliesFollowUp(t *testing.T) {
	sa := newSlackAppWith(t, `schedules:
  - name: nightly
    cron: "0 9 * * *"
    timezone: UTC
    prompt: Deploy whatever is ready.
    post_to: {slack_channel: C9}
`)
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"Deploy?"}`}, fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}),
		fakemodel.Text("Nothing deployed: it needs an approval."),
	)
	if err := sa.app.Schedules().Tick(context.Background(), sa.clock.Now().Add(25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var post slackfake.Message
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ms := sa.slack.Messages("C9"); len(ms) > 0 && strings.Contains(ms[0].Text, "Nothing deployed") {
			post = ms[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no outcome in C9: %+v", sa.slack.Messages("C9"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if post.ThreadTS != "" || !strings.Contains(post.Text, "nightly") {
		t.Fatalf("outcome post %+v", post)
	}
	runs, _ := sa.app.engine.Sessions(context.Background(), engine.SessionFilter{})
	if len(runs) != 1 || runs[0].Origin != engine.OriginSchedule || runs[0].Status != engine.StatusIdle || runs[0].OpenQuestion() != nil {
		t.Fatalf("scheduled session %+v", runs)
	}
	for _, ev := range sa.events(runs[0].ID) {
		if ev.Type == engine.EventToolResult && !strings.Contains(string(ev.Data), `schedule \"nightly\"`) {
			t.Errorf("tool result does not name the schedule: %s", ev.Data)
		}
	}
	pending, _ := sa.app.engine.Approvals(context.Background(), engine.ApprovalFilter{})
	if len(pending) != 0 {
		t.Fatalf("approvals recorded: %+v", pending)
	}
	// A reply in the outcome's thread starts an interactive session with
	// the outcome as context, without a mention.
	sa.fake.Push(fakemodel.Text("It was the api service."))
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": "EvF",
		"event": map[string]any{"type": "message", "user": "U5", "text": "which one?", "ts": "1800000000.000100", "event_ts": "1800000000.000100", "thread_ts": post.TS, "channel": "C9", "channel_type": "channel"},
	})
	if st := sa.post("/slack/events", "application/json", body); st != 200 {
		t.Fatal(st)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		th := sa.slack.Thread("C9", post.TS)
		if len(th) > 0 && strings.Contains(th[len(th)-1].Text, "It was the api service.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no follow-up reply: %+v", th)
		}
		time.Sleep(10 * time.Millisecond)
	}
	reqs := sa.fake.Requests()
	if last := string(reqs[len(reqs)-1].Raw); !strings.Contains(last, "Nothing deployed") || !strings.Contains(last, "which one?") {
		t.Fatalf("follow-up lacks the run's outcome: %s", last)
	}
}

// TestSlack_ResumeRetriesOnlyForTheStarter: a stranger's Resume click is
// refused like a stranger's answer; the starter's click resumes with retry,
// so the message the failure left unanswered runs again and is answered.
func TestSlack_ResumeRetriesOnlyForTheStarter(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.Fail(503, "overloaded"))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> what is up?", "")
	errMsg := sa.waitThread(ts, "provider_unavailable")
	s := sa.session(ts)

	sa.click("U2", errMsg, "brain_resume")
	sa.waitEphemeral("U2", "Only <@U1> can resume this session.")
	if got, _ := sa.app.engine.Session(context.Background(), s.ID); got.Status != engine.StatusInterrupted {
		t.Fatalf("a stranger's click changed the session: %s", got.Status)
	}

	sa.fake.Push(fakemodel.Text("All quiet."))
	sa.click("U1", errMsg, "brain_resume")
	sa.waitEphemeral("U1", "running 1 unanswered message(s) again")
	sa.waitThread(ts, "All quiet.")
	if reqs := sa.fake.Requests(); !strings.Contains(string(reqs[len(reqs)-1].Messages), "what is up?") {
		t.Fatalf("the retried turn did not carry the unanswered message: %s", reqs[len(reqs)-1].Messages)
	}
}
