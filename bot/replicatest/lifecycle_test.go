package replicatest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/bot"
	"brain/bot/config"
	"brain/engine/model/fakemodel"
	"brain/internal/startstop/startstoptest"
	"brain/store/postgres/pgtest"
)

// TestServices_StartStopStressOnPostgres starts and stops every
// long-lived service of an app on PostgreSQL, the live feed among them,
// from many goroutines at once (run under -race), as bot's
// TestServices_StartStopStress does on SQLite; the app still shuts down
// cleanly afterwards.
func TestServices_StartStopStressOnPostgres(t *testing.T) {
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	cfgText := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
storage: {driver: postgres, dsn: %q, lease_ttl: 1s, poll_interval: 100ms}
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
schedules:
  - {name: nightly, cron: "0 3 * * *", timezone: UTC, agent: default, prompt: tidy up}
`, filepath.Join(dir, "data"), pgtest.NewDatabase(t), fake.URL())
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	app, err := bot.New(context.Background(), cfg, bot.Options{Stderr: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, s := range app.Services() {
		names = append(names, fmt.Sprintf("%T", s))
		t.Run(fmt.Sprintf("%d_%T", i, s), func(t *testing.T) { startstoptest.Stress(t, s) })
	}
	if !strings.Contains(strings.Join(names, " "), "liveFeed") {
		t.Errorf("services %v: no live feed on PostgreSQL", names)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown after the stress: %v", err)
	}
}
