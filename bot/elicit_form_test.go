package bot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools/mcp/mcptest"
)

// submitValues submits the nth modal opened (1-based) with values by
// "block_id" (the input's action_id is "value"), as Slack posts it.
func (sa *slackApp) submitValues(user string, n int, values map[string]string) {
	sa.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(sa.slack.Views()) < n {
		if time.Now().After(deadline) {
			sa.t.Fatalf("modal %d was not opened", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	v := sa.slack.Views()[n-1]
	state := map[string]any{}
	for block, val := range values {
		state[block] = map[string]any{"value": map[string]any{"type": "plain_text_input", "value": val}}
	}
	body := interactionForm(map[string]any{
		"type": "view_submission", "team": map[string]any{"id": slackfake.TeamID},
		"user": map[string]any{"id": user, "team_id": slackfake.TeamID}, "trigger_id": "9.9.9",
		"view": map[string]any{"id": v.ID, "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.PrivateMetadata,
			"state": map[string]any{"values": state}},
	})
	if st := sa.post("/slack/interactions", "application/x-www-form-urlencoded", body); st != 200 {
		sa.t.Fatalf("submit: status %d", st)
	}
}

// A request for a number and a text opens, from "Answer…", a Slack modal
// with a number input and a text input; a value that is not an integer is
// refused where the person clicked and nothing is sent; a valid one is
// sent to the server once.
func TestSlack_MCPElicitationAnsweredByModal(t *testing.T) {
	peer := mcptest.New(t, mcptest.Seats())
	answers := func() []string { _, a := peer.Counts(); return a }
	sa := newSlackAppAgent(t, "    tools: [ask, travel]\n", fmt.Sprintf(`mcp_servers:
  - id: travel
    url: %s/mcp
`, peer.URL))
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "travel__book", Input: `{}`}),
		fakemodel.Text("Your seats are booked."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> book seats", "")
	q := sa.waitThread(ts, "How many seats?")
	sa.click("U1", q, "brain_answer_form")
	sa.submitValues("U1", 1, map[string]string{"brain_field_0": "two", "brain_field_1": "aisle please"})
	sa.waitEphemeral("U1", "is not a valid integer for count")
	if a := answers(); len(a) != 0 {
		t.Fatalf("an invalid form reached the server: %v", a)
	}
	views := sa.slack.Views()
	if blocks := string(views[0].Blocks); !strings.Contains(blocks, `"number_input"`) || !strings.Contains(blocks, `"is_decimal_allowed":false`) ||
		!strings.Contains(blocks, `"plain_text_input"`) {
		t.Fatalf("modal blocks %s", blocks)
	}

	sa.click("U1", q, "brain_answer_form")
	sa.submitValues("U1", 2, map[string]string{"brain_field_0": "2", "brain_field_1": "aisle please"})
	sa.waitThread(ts, "Your seats are booked.")
	got, _ := sa.waitTurns(sa.session(ts).ID, 2)
	if got.Status != engine.StatusIdle {
		t.Fatalf("status %s", got.Status)
	}
	if a := answers(); len(a) != 1 || !strings.Contains(a[0], `"count":2`) || !strings.Contains(a[0], `"note":"aisle please"`) {
		t.Fatalf("server got %v", a)
	}
}
