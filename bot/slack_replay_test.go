package bot

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/webhooks/slackhook"
)

// recordedPayload reads a payload Slack sent, as recorded by Slack's own
// SDK (testdata/slack-payloads, source and licence in its README), with
// its ids already those of the test workspace, for fill to adjust.
func recordedPayload(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "slack-payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// field is the object at a path of a recorded payload ("event",
// "container", "actions.0"), which must already be there: fill changes
// values, never the shape Slack sent.
func field(t *testing.T, m map[string]any, path ...string) map[string]any {
	t.Helper()
	var at any = m
	for _, p := range path {
		switch v := at.(type) {
		case map[string]any:
			at = v[p]
		case []any:
			at = v[0]
		}
	}
	obj, ok := at.(map[string]any)
	if !ok {
		t.Fatalf("recorded payload has no object at %v", path)
	}
	return obj
}

func (sa *slackApp) replayEvent(payload map[string]any, hdr ...string) {
	sa.t.Helper()
	body, _ := json.Marshal(payload)
	if st := sa.post("/slack/events", "application/json", body, hdr...); st != 200 {
		sa.t.Fatalf("recorded event refused: status %d\n%s", st, body)
	}
}

func (sa *slackApp) replayInteraction(payload map[string]any) {
	sa.t.Helper()
	data, _ := json.Marshal(payload)
	body := []byte("payload=" + url.QueryEscape(string(data)))
	if st := sa.post("/slack/interactions", "application/x-www-form-urlencoded", body); st != 200 {
		sa.t.Fatalf("recorded interaction refused: status %d\n%s", st, data)
	}
}

// Payloads Slack really sent (recorded in Slack's bolt-python tests), with
// only their ids filled in for the test workspace, are replayed signed
// into /slack/events and /slack/interactions: each decodes, reaches the
// session of its thread, a redelivery is deduplicated, and none is
// refused (a file share's file is downloaded and reaches the model).
// sa.post also records them, so TestMain type-checks them against
// @slack/types and @slack/bolt like the payloads the other tests build.
func TestSlack_RecordedPayloadsReplayed(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))

	// app_mention: starts a session in the thread of the mention.
	mention := recordedPayload(t, "app_mention.json")
	sa.replayEvent(mention)
	root := field(t, mention, "event")["ts"].(string)
	card := sa.waitThread(root, "Deploy api")
	s := sa.session(root)
	if s.StartedBy != "W222" || s.Origin != engine.OriginSlack {
		t.Fatalf("session %+v", s)
	}
	// The same event again, bare and as Slack's marked redelivery, is
	// acknowledged and dropped.
	sa.replayEvent(mention)
	sa.replayEvent(mention, slackhook.HeaderRetryNum, "1", slackhook.HeaderRetryReason, "http_timeout")

	// block_actions: the recorded click, on the card's "Deny with reason".
	click := recordedPayload(t, "block_actions.json")
	container := field(t, click, "container")
	container["message_ts"], container["thread_ts"], container["is_ephemeral"] = card.TS, root, false
	action := field(t, click, "actions", "0")
	action["action_id"], action["value"] = "brain_deny_reason", buttonValue(t, card, "brain_deny_reason")
	sa.replayInteraction(click)
	deadline := time.Now().Add(20 * time.Second)
	for len(sa.slack.Views()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the recorded click opened no form")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// view_submission: the recorded submission, of the form brain opened.
	v := sa.slack.Views()[0]
	submit := recordedPayload(t, "view_submission.json")
	view := field(t, submit, "view")
	view["id"], view["root_view_id"], view["callback_id"], view["private_metadata"] = v.ID, v.ID, v.CallbackID, v.PrivateMetadata
	field(t, view, "state")["values"] = map[string]any{"brain_comment": map[string]any{"comment": map[string]any{"type": "plain_text_input", "value": "not today"}}}
	sa.replayInteraction(submit)
	sa.waitMessage("C1", card.TS, "*Reason*: not today")
	if sa.applied.Load() != 0 {
		t.Fatal("a denied call was applied")
	}

	// message: the recorded plain message, as a reply in the thread,
	// continues the session without a mention.
	sa.fake.Push(fakemodel.Text("Second answer."))
	reply := recordedPayload(t, "message.json")
	field(t, reply, "event")["thread_ts"] = root
	sa.replayEvent(reply)
	sa.waitThread(root, "Second answer.")
	if got := sa.session(root); got.ID != s.ID {
		t.Fatalf("the reply went to session %s, not %s", got.ID, s.ID)
	}

	// message, subtype file_share: the recorded file, served by the fake
	// Slack, is downloaded and reaches the model as an image.
	sa.fake.Push(fakemodel.Text("A picture."))
	png := sa.slack.AddFile(slackfake.File{ID: "F111", Name: "file.png", Mimetype: "image/png", Data: pngBytes})
	share := recordedPayload(t, "message_file_share.json")
	ev := field(t, share, "event")
	ev["thread_ts"] = root
	file := field(t, ev, "files", "0")
	file["url_private"], file["url_private_download"], file["size"] = png.URL, png.URL, png.Size
	sa.replayEvent(share)
	sa.waitThread(root, "A picture.")
	if n := sa.slack.Downloads("F111"); n != 1 {
		t.Fatalf("the recorded file was downloaded %d times", n)
	}
	reqs := sa.fake.Requests()
	if last := string(reqs[len(reqs)-1].Raw); !strings.Contains(last, base64.StdEncoding.EncodeToString(pngBytes)) {
		t.Fatalf("the recorded file's image is not in the model request: %s", last)
	}

	_, evs := sa.waitTurns(s.ID, 3)
	if n := countType(evs, engine.EventUserMessage); n != 3 || sa.fake.Received() != 4 {
		t.Fatalf("%d inputs, %d model calls: the redelivery ran again or a payload was lost", n, sa.fake.Received())
	}
}

// interactionForm is the form body of an interaction a test builds, with
// the fields Slack sends in every one (as recorded in
// testdata/slack-payloads, and as @slack/bolt's BlockAction and
// ViewSubmitAction require) filled in where the test left them out: the
// app, the team's domain, the user's name, the channel's name, each
// action's label, and the whole of a view.
func interactionForm(p map[string]any) []byte {
	setDefault := func(m map[string]any, k string, v any) {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	setDefault(p, "token", "verification_token")
	setDefault(p, "api_app_id", "A0BRAIN")
	setDefault(p, "trigger_id", "1.2.3")
	if team, ok := p["team"].(map[string]any); ok {
		setDefault(team, "domain", "brain-test")
	}
	if user, ok := p["user"].(map[string]any); ok {
		setDefault(user, "username", "person")
		setDefault(user, "name", "person")
	}
	if ch, ok := p["channel"].(map[string]any); ok {
		setDefault(ch, "name", "general")
	}
	if p["type"] == "block_actions" {
		setDefault(p, "response_url", "https://hooks.slack.invalid/actions/1")
		if actions, ok := p["actions"].([]map[string]any); ok {
			for _, a := range actions {
				setDefault(a, "text", map[string]any{"type": "plain_text", "text": "Button"})
			}
		}
	}
	if view, ok := p["view"].(map[string]any); ok {
		for k, v := range map[string]any{
			"callback_id": "", "team_id": slackfake.TeamID, "app_id": "A0BRAIN", "bot_id": slackfake.BotID,
			"title": map[string]any{"type": "plain_text", "text": "brain"}, "blocks": []any{},
			"close": nil, "submit": nil, "state": map[string]any{"values": map[string]any{}},
			"hash": "1700000000.abcdefgh", "private_metadata": "", "root_view_id": view["id"],
			"previous_view_id": nil, "clear_on_close": false, "notify_on_close": false,
		} {
			setDefault(view, k, v)
		}
	}
	data, _ := json.Marshal(p)
	return []byte("payload=" + url.QueryEscape(string(data)))
}
