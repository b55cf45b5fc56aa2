package web

import (
	"os"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/internal/contracts"
)

// slackContract collects the Web API calls the console's sign-in tests made
// to their fake Slack (openid.connect.token); TestMain type-checks their
// bodies against @slack/web-api's request types once the tests have run.
var slackContract contracts.SlackCalls

// recordSlack records fake's Web API calls; the authorize step is the
// browser's page at Slack, not a Web API method.
func recordSlack(t *testing.T, fake *slackfake.Server) {
	methods := map[string]bool{}
	for _, c := range fake.Calls("") {
		if c.Method == "openid.connect.authorize" {
			continue
		}
		slackContract.Record(c.Method, c.Params)
		methods[c.Method] = true
	}
	// For docs/testing.md's count of the tests exercising each method.
	for m := range methods {
		t.Logf("contract operation: %s", m)
	}
}

func TestMain(m *testing.M) { os.Exit(slackContract.CheckMain(m)) }
