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

func recordSlack(fake *slackfake.Server) {
	for _, c := range fake.Calls("") {
		slackContract.Record(c.Method, c.Params)
	}
}

func TestMain(m *testing.M) { os.Exit(slackContract.CheckMain(m)) }
