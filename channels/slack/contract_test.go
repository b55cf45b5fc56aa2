package slack

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/internal/contracts"
)

// slackContract collects the Web API calls every test of the package made
// to its fake Slack; TestMain type-checks their bodies against the
// official Node SDK's request types (@slack/web-api, pinned) once the
// tests have run: an unknown or misspelt field, or a wrong type, fails
// the package.
var slackContract contracts.SlackCalls

func recordSlack(t *testing.T, fake *slackfake.Server) {
	methods := map[string]bool{}
	for _, c := range fake.Calls("") {
		slackContract.Record(c.Method, c.Params)
		methods[c.Method] = true
	}
	// For docs/testing.md's count of the tests exercising each method.
	for m := range methods {
		t.Logf("contract operation: %s", m)
	}
}

func TestMain(m *testing.M) { os.Exit(slackContract.CheckMain(m)) }

// The canary: a misspelt field, a wrong type and a broken block are
// refused, in Web API bodies and in interaction payloads, while the right
// body and Slack's recorded payloads pass.
func TestSlackContract_WrongBodiesRefused(t *testing.T) {
	bodies := []contracts.Body{
		{Name: "right", Type: contracts.SlackType("chat.postMessage"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "text": {"hi"}, "thread_ts": {"1690000000.000100"}})},
		{Name: "misspelt", Type: contracts.SlackType("chat.postMessage"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "text": {"hi"}, "thread_tss": {"1690000000.000100"}})},
		{Name: "wrong type", Type: contracts.SlackType("chat.update"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "ts": {"1"}, "text": {"hi"}, "blocks": {`{"type":"section"}`}})},
		{Name: "bad block", Type: contracts.SlackType("chat.postMessage"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "blocks": {`[{"type":"section","txt":{"type":"mrkdwn","text":"x"}}]`}})},
		{Name: "openid.connect.token misspelt", Type: contracts.SlackType("openid.connect.token"), JSON: contracts.SlackBody(url.Values{"client_id": {"c"}, "client_secret": {"s"}, "code": {"x"}, "redirect_url": {"https://brain.example/cb"}})},
	}
	// The recorded interaction payloads (testdata/slack-payloads) pass
	// @slack/bolt's types; each with one field broken does not.
	for _, name := range []string{"block_actions", "view_submission"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "slack-payloads", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		_, typ := contracts.InteractionType(data)
		bodies = append(bodies, contracts.Body{Name: "recorded " + name, Type: typ, JSON: data})
		var p map[string]any
		_ = json.Unmarshal(data, &p)
		switch name {
		case "block_actions":
			p["actions"].([]any)[0].(map[string]any)["action_ts"] = 1596530385.194939 // a number, not the string Slack sends
		case "view_submission":
			delete(p["view"].(map[string]any), "private_metadata") // Slack always sends it
		}
		broken, _ := json.Marshal(p)
		bodies = append(bodies, contracts.Body{Name: name + " broken", Type: typ, JSON: broken})
	}
	// The recorded file_share event passes the SDK's type with the fields
	// it lacks (contracts.SlackImports); a misspelt file field does not.
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "slack-payloads", "message_file_share.json"))
	if err != nil {
		t.Fatal(err)
	}
	var share struct {
		Event map[string]any `json:"event"`
	}
	_ = json.Unmarshal(data, &share)
	event, _ := json.Marshal(share.Event)
	bodies = append(bodies, contracts.Body{Name: "recorded file_share", Type: "FileShareEvent", JSON: event})
	file := share.Event["files"].([]any)[0].(map[string]any)
	file["thumb_tinny"] = file["thumb_tiny"]
	broken, _ := json.Marshal(share.Event)
	bodies = append(bodies, contracts.Body{Name: "file_share misspelt", Type: "FileShareEvent", JSON: broken})
	errs := contracts.TypeCheck(t, contracts.SlackImports, bodies)
	for i := range bodies {
		right := i == 0 || strings.HasPrefix(bodies[i].Name, "recorded ")
		if right && errs[i] != "" {
			t.Errorf("%s refused: %s", bodies[i].Name, errs[i])
		}
		if !right && errs[i] == "" {
			t.Errorf("%s accepted: %s", bodies[i].Name, bodies[i].JSON)
		}
	}
}
