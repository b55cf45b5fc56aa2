package bot

import (
	"os"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/internal/contracts"
)

// slackContract collects the Web API calls the package's Slack tests made
// to their fake Slack (streaming, assistant threads, agents, views, OIDC
// included); TestMain type-checks their bodies against the official Node
// SDK's request types (@slack/web-api, pinned) once the tests have run.
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
