package slackfake_test

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"brain/channels/slack/slackfake"
)

func modal(title string, submit bool, input bool) slack.ModalViewRequest {
	v := slack.ModalViewRequest{
		Type: slack.VTModal, Title: slack.NewTextBlockObject(slack.PlainTextType, title, false, false),
		CallbackID: "cb", PrivateMetadata: `{"a":"x"}`,
	}
	if submit {
		v.Submit = slack.NewTextBlockObject(slack.PlainTextType, "Send", false, false)
	}
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*what*", false, false), nil, nil)}
	if input {
		el := slack.NewPlainTextInputBlockElement(nil, "comment")
		blocks = append(blocks, slack.NewInputBlock("b", slack.NewTextBlockObject(slack.PlainTextType, "Reason", false, false), nil, el))
	}
	v.Blocks = slack.Blocks{BlockSet: blocks}
	return v
}

func TestServer_ViewsOpen(t *testing.T) {
	fake, api, ctx := setup(t)
	resp, err := api.OpenViewContext(ctx, "trig", modal("Deny", true, true))
	if err != nil {
		t.Fatal(err)
	}
	views := fake.Views()
	if len(views) != 1 || resp.ID != views[0].ID || views[0].CallbackID != "cb" || views[0].PrivateMetadata != `{"a":"x"}` || views[0].TriggerID != "trig" {
		t.Fatalf("views %+v, answer %+v", views, resp.View)
	}
	for name, v := range map[string]slack.ModalViewRequest{
		"title too long":       modal(strings.Repeat("t", 25), true, true),
		"input without submit": modal("Deny", false, true),
	} {
		if _, err := api.OpenViewContext(ctx, "trig", v); err == nil || !strings.Contains(err.Error(), "invalid_arguments") {
			t.Errorf("%s: %v, want invalid_arguments", name, err)
		}
	}
	if len(fake.Views()) != 1 {
		t.Error("a refused view was kept")
	}
}

func TestServer_ConversationsOpen(t *testing.T) {
	_, api, ctx := setup(t)
	ch, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U0ANN"}})
	if err != nil || ch.ID != slackfake.DMChannel("U0ANN") {
		t.Fatalf("conversations.open = %+v, %v", ch, err)
	}
	if _, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"nobody"}}); err == nil {
		t.Error("a DM with a non-user opened")
	}
}
