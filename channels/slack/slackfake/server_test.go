package slackfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"brain/channels/slack/slackfake"
)

func setup(t *testing.T) (*slackfake.Server, *slack.Client, context.Context) {
	t.Helper()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return fake, slack.New("xoxb-test", slack.OptionAPIURL(fake.URL()+"/api/")), ctx
}

func TestServer_AuthTest(t *testing.T) {
	_, api, ctx := setup(t)
	resp, err := api.AuthTestContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if resp.UserID != slackfake.BotUserID || resp.BotID != slackfake.BotID || resp.TeamID != slackfake.TeamID {
		t.Errorf("auth.test = %+v", resp)
	}
}

func TestServer_MessagesLifecycle(t *testing.T) {
	fake, api, ctx := setup(t)
	blocks := slack.MsgOptionBlocks(slack.NewSectionBlock(
		slack.NewTextBlockObject(slack.MarkdownType, "*hi*", false, false), nil, nil))
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("parent", false))
	if err != nil {
		t.Fatal(err)
	}
	_, reply, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false), blocks, slack.MsgOptionTS(parent))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := fake.Message("C1", reply)
	if !ok || m.ThreadTS != parent || m.Text != "hi" || !strings.Contains(string(m.Blocks), `"*hi*"`) {
		t.Fatalf("reply = %+v", m)
	}

	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", reply, slack.MsgOptionText("edited", false)); err != nil {
		t.Fatal(err)
	}
	if m, _ := fake.Message("C1", reply); m.Text != "edited" || m.Updates != 1 || m.Blocks == nil {
		t.Errorf("after update = %+v", m)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.000000", slack.MsgOptionText("x", false)); err == nil || err.Error() != "message_not_found" {
		t.Errorf("update of a missing message: %v", err)
	}

	msgs, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent})
	if err != nil || len(msgs) != 2 || msgs[1].Text != "edited" || msgs[1].BotID != slackfake.BotID {
		t.Errorf("conversations.replies = %+v, %v", msgs, err)
	}

	if _, _, err := api.DeleteMessageContext(ctx, "C1", reply); err != nil {
		t.Fatal(err)
	}
	if _, ok := fake.Message("C1", reply); ok || len(fake.Thread("C1", parent)) != 1 {
		t.Error("message still there after delete")
	}

	ts, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("psst", false), slack.MsgOptionTS(parent))
	if err != nil || ts == "" {
		t.Fatalf("postEphemeral = %q, %v", ts, err)
	}
	if e := fake.Ephemerals(); len(e) != 1 || e[0].User != "U1" || e[0].Text != "psst" || e[0].ThreadTS != parent {
		t.Errorf("ephemerals = %+v", e)
	}
	if len(fake.Messages("C1")) != 1 {
		t.Errorf("messages = %+v", fake.Messages("C1"))
	}
}

func TestServer_UniqueIncreasingTS(t *testing.T) {
	fake, api, ctx := setup(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
				t.Error(err)
			}
		})
	}
	if err := fake.WaitMessages(ctx, 20); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	msgs := fake.Messages("C1")
	for i := 1; i < len(msgs); i++ {
		if msgs[i].TS <= msgs[i-1].TS {
			t.Errorf("ts %s after %s", msgs[i].TS, msgs[i-1].TS)
		}
	}
	if len(msgs) != 20 || len(fake.Calls("chat.postMessage")) != 20 {
		t.Errorf("%d messages, %d calls", len(msgs), len(fake.Calls("chat.postMessage")))
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := fake.WaitMessages(short, 21); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitMessages beyond what was posted: %v", err)
	}
}

func TestServer_Faults(t *testing.T) {
	fake, api, ctx := setup(t)
	fake.RateLimit("chat.postMessage", 2, time.Second)
	for range 2 {
		_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
			t.Fatalf("want a 429 with Retry-After 1s, got %v", err)
		}
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Fatalf("third call: %v", err)
	}

	fake.Fail("assistant.threads.setStatus", 1, "not_allowed")
	params := slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: "1.1", Status: "working"}
	var se slack.SlackErrorResponse
	if err := api.SetAssistantThreadsStatusContext(ctx, params); !errors.As(err, &se) || se.Err != "not_allowed" {
		t.Errorf("want not_allowed, got %v", err)
	}
	if err := api.SetAssistantThreadsStatusContext(ctx, params); err != nil || fake.Status("C1", "1.1") != "working" {
		t.Errorf("status = %q, %v", fake.Status("C1", "1.1"), err)
	}
	if calls := fake.Calls("assistant.threads.setStatus"); len(calls) != 2 || calls[0].Error != "not_allowed" {
		t.Errorf("calls = %+v", calls)
	}
}

func TestServer_RejectsInvalidBlocks(t *testing.T) {
	fake, api, ctx := setup(t)
	button := func(id string) slack.BlockElement {
		return slack.NewButtonBlockElement(id, "v", slack.NewTextBlockObject(slack.PlainTextType, "b", false, false))
	}
	long := slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("x", 3001), false, false)
	tests := map[string]slack.MsgOption{
		"duplicate action_id in a block": slack.MsgOptionBlocks(slack.NewActionBlock("a", button("x"), button("x"))),
		"duplicate block_id":             slack.MsgOptionBlocks(slack.NewActionBlock("a", button("x")), slack.NewActionBlock("a", button("y"))),
		"long section":                   slack.MsgOptionBlocks(slack.NewSectionBlock(long, nil, nil)),
		"long button label": slack.MsgOptionBlocks(slack.NewActionBlock("a", slack.NewButtonBlockElement("x", "v",
			slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("b", 76), false, false)))),
	}
	for name, opt := range tests {
		if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false), opt); err == nil || err.Error() != "invalid_blocks" {
			t.Errorf("%s: %v, want invalid_blocks", name, err)
		}
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText(strings.Repeat("x", 40001), false)); err == nil || err.Error() != "msg_too_long" {
		t.Errorf("long text: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1"); err == nil || err.Error() != "no_text" {
		t.Errorf("no text: %v", err)
	}
	if n := len(fake.Messages("C1")); n != 0 {
		t.Errorf("%d rejected messages were kept", n)
	}
}

func TestServer_UnknownMethod(t *testing.T) {
	fake, _, ctx := setup(t)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fake.URL()+"/api/nope.nothing",
		strings.NewReader(`{"channel":"C1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer xoxb-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.OK || got.Error != "unknown_method" {
		t.Errorf("body = %s", body)
	}
	if c := fake.Calls("nope.nothing"); len(c) != 1 || c[0].Params.Get("channel") != "C1" {
		t.Errorf("calls = %+v", c)
	}
}
