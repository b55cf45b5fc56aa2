package bot

import (
	"encoding/json"
	"strings"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/engine/model/fakemodel"
)

// TestSlack_StreamedFinalReplyLinksToTheConsole: with public_url set and
// the console on, a streamed final reply gets the "open in brain" line
// above its feedback buttons when the stream stops, once, though the
// stream holds the text of two rounds (the first followed by tool calls).
func TestSlack_StreamedFinalReplyLinksToTheConsole(t *testing.T) {
	sa := newSlackAppWith(t, "public_url: https://brain.example\n")
	sa.fake.Push(
		fakemodel.TextAndTools("Let me look.", fakemodel.Call{Name: "lookup", Input: `{"q":"rows"}`}),
		fakemodel.Text("Found them."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> look it up", "")
	s := sa.session(ts)
	sa.waitTurns(s.ID, 1)
	waitFor(t, "the stream stopped with its tail", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 1 && !ms[0].Streaming && strings.Contains(string(ms[0].Blocks), "feedback_buttons")
	})
	stops := sa.slack.Calls("chat.stopStream")
	if len(stops) != 1 {
		t.Fatalf("%d chat.stopStream calls, want 1", len(stops))
	}
	raw := stops[0].Params.Get("blocks")
	var blocks []struct {
		Type     string
		Elements []struct{ Type, Text string }
	}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		t.Fatalf("stop blocks %s: %v", raw, err)
	}
	link := "<https://brain.example/sessions/" + s.ID + "|open in brain>"
	if len(blocks) != 2 || blocks[0].Type != "context" || len(blocks[0].Elements) != 1 || blocks[0].Elements[0].Text != link ||
		blocks[1].Type != "context_actions" {
		t.Fatalf("the stream's stop is not the console link %s above the feedback buttons: %s", link, raw)
	}
}
