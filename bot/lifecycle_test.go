package bot

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"brain/bot/config"
	"brain/channels/linear/linearfake"
	"brain/channels/slack/slackfake"
	"brain/engine/model/fakemodel"
	"brain/internal/startstop/startstoptest"
)

// TestServices_StartStopStress starts and stops every long-lived service of
// a fully configured app (MCP catalog, engine, Slack and Linear bridges,
// scheduler) from many goroutines at once, under -race: Start and Stop
// must be safe in any order, Stop before Start and twice included, and the
// app must still shut down cleanly afterwards. bot/replicatest does the
// same on PostgreSQL, where the live feed joins them.
func TestServices_StartStopStress(t *testing.T) {
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	slack := slackfake.New()
	t.Cleanup(slack.Close)
	lin := linearfake.New(linearToken)
	t.Cleanup(lin.Close)
	peer := httptest.NewServer(server.NewStreamableHTTPServer(server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))))
	t.Cleanup(peer.Close)

	dir := t.TempDir()
	extra := fmt.Sprintf(`    tools: [tracker]
mcp_servers:
  - id: tracker
    url: %s/mcp
slack: {bot_token: xoxb-stress, signing_secret: stress-signing-secret, api_url: %s/api}
linear: {webhook_secret: %s, access_token: %s, api_url: %s}
schedules:
  - {name: nightly, cron: "0 3 * * *", timezone: UTC, agent: default, prompt: tidy up}
`, peer.URL, slack.URL(), linearSecret, linearToken, lin.URL())
	cfg, err := config.Load(writeConfig(t, dir, fake.URL(), extra), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	app, err := New(context.Background(), cfg, Options{Stderr: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Services()) != 5 {
		t.Fatalf("services = %d, want the MCP catalog, engine, two bridges and the scheduler", len(app.Services()))
	}
	for i, s := range app.Services() {
		t.Run(fmt.Sprintf("%d_%T", i, s), func(t *testing.T) { startstoptest.Stress(t, s) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown after the stress: %v", err)
	}
}
