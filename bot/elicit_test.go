package bot

import (
	"fmt"
	"strings"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools/mcp/mcptest"
)

// A server's request for input reaches the Slack thread as question
// buttons; the click sends the call again with the choice, once.
func TestSlack_MCPElicitationAnsweredByButton(t *testing.T) {
	peer := mcptest.New(t, mcptest.Seat())
	sa := newSlackAppAgent(t, "    tools: [ask, travel]\n", fmt.Sprintf(`mcp_servers:
  - id: travel
    url: %s/mcp
    protocol: "2026-07-28"
`, peer.URL))
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "travel__book", Input: `{}`}),
		fakemodel.Text("Your seat is booked."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> book me a seat", "")
	q := sa.waitThread(ts, "Which seat?")
	for _, want := range []string{"aisle", "window", "Decline", "Cancel"} {
		if !strings.Contains(string(q.Blocks), want) {
			t.Fatalf("question lacks %s: %s", want, q.Blocks)
		}
	}
	sa.click("U1", q, "brain_answer") // the first button: aisle
	sa.waitThread(ts, "Your seat is booked.")
	got, _ := sa.waitTurns(sa.session(ts).ID, 2)
	if got.Status != engine.StatusIdle {
		t.Fatalf("status %s", got.Status)
	}
	calls := peer.Calls()
	if len(calls) != 2 {
		t.Fatalf("tools/call sent %d times, want 2", len(calls))
	}
	if string(calls[1]["requestState"]) != `"st-1"` || !strings.Contains(string(calls[1]["inputResponses"]), `"seat":"aisle"`) {
		t.Fatalf("re-sent call %s %s", calls[1]["requestState"], calls[1]["inputResponses"])
	}
	if m := sa.metricsText(); !strings.Contains(m, `brain_mcp_elicitations_total{server="travel"} 1`) {
		t.Fatalf("metrics: %s", m)
	}
}
