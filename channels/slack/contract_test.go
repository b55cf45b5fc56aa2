package slack

import (
	"net/url"
	"os"
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

// The canary: a misspelt field, a wrong type and a method the SDK does not
// know are refused.
func TestSlackContract_WrongBodiesRefused(t *testing.T) {
	bodies := []contracts.Body{
		{Name: "right", Type: contracts.SlackType("chat.postMessage"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "text": {"hi"}, "thread_ts": {"1690000000.000100"}})},
		{Name: "misspelt", Type: contracts.SlackType("chat.postMessage"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "text": {"hi"}, "thread_tss": {"1690000000.000100"}})},
		{Name: "wrong type", Type: contracts.SlackType("chat.update"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "ts": {"1"}, "text": {"hi"}, "blocks": {`{"type":"section"}`}})},
		{Name: "bad block", Type: contracts.SlackType("chat.postMessage"), JSON: contracts.SlackBody(url.Values{"channel": {"C1"}, "blocks": {`[{"type":"section","txt":{"type":"mrkdwn","text":"x"}}]`}})},
	}
	errs := contracts.TypeCheck(t, contracts.SlackImports, bodies)
	if errs[0] != "" {
		t.Errorf("right body refused: %s", errs[0])
	}
	for i := 1; i < len(bodies); i++ {
		if errs[i] == "" {
			t.Errorf("%s accepted: %s", bodies[i].Name, bodies[i].JSON)
		}
	}
}
