package slack

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/internal/contracts"
)

// slackContract collects the Web API calls every test of the package made
// to its fake Slack; TestMain type-checks their bodies against the
// official Node SDK's request types (@slack/web-api, pinned) once the
// tests have run: an unknown or misspelt field, or a wrong type, fails
// the package.
var slackContract = &slackCalls{seen: map[string]bool{}}

type slackCalls struct {
	mu     sync.Mutex
	seen   map[string]bool // method + body: each distinct body is checked once
	bodies []contracts.Body
}

func (c *slackCalls) record(fake *slackfake.Server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, call := range fake.Calls("") {
		params := url.Values{}
		for k, v := range call.Params {
			if k != "token" { // sent as a bearer header; the types allow it too
				params[k] = v
			}
		}
		body := contracts.SlackBody(params)
		if key := call.Method + " " + string(body); !c.seen[key] {
			c.seen[key] = true
			c.bodies = append(c.bodies, contracts.Body{Name: call.Method, Type: contracts.SlackType(call.Method), JSON: body})
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && os.Getenv("BRAIN_SKIP_NODE") != "1" && len(slackContract.bodies) > 0 {
		if err := checkSlackContract(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: the Web API bodies sent to the fake Slack against @slack/web-api's request types:")
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func checkSlackContract() error {
	modules, err := contracts.Installed()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "slack-contract")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bodies := slackContract.bodies
	errs, err := contracts.TypeCheckIn(modules, dir, contracts.SlackImports, bodies)
	if err != nil {
		return err
	}
	var bad []string
	methods := map[string]int{}
	for i, e := range errs {
		methods[bodies[i].Name]++
		if e != "" {
			bad = append(bad, fmt.Sprintf("%s: %s\n  %s", bodies[i].Name, e, bodies[i].JSON))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "\n"))
	}
	var names []string
	for m, n := range methods {
		names = append(names, fmt.Sprintf("%s (%d)", m, n))
	}
	sort.Strings(names)
	if testing.Verbose() {
		fmt.Printf("slack contract: %d distinct bodies of %d methods checked: %s\n", len(bodies), len(methods), strings.Join(names, ", "))
	}
	return nil
}

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
