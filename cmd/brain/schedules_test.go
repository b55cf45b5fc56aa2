package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"brain/bot"
	"brain/bot/config"
	"brain/engine/model/fakemodel"
)

func writeSchedulesConfig(t *testing.T, dir, addr, modelURL string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: %s
data_dir: %s
api_keys: [cli-test-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f]
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
schedules:
  - {name: digest, cron: "0 9 * * 1-5", timezone: Europe/Paris, prompt: Summarise yesterday.}
  - {name: paused, cron: "0 12 * * *", enabled: false, prompt: Later.}
`, addr, filepath.Join(dir, "data"), modelURL)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String() + errOut.String(), err
}

func TestSchedules_HelpAndUsage(t *testing.T) {
	for _, args := range [][]string{{"schedules", "--help"}, {"schedules", "list", "--help"}, {"schedules", "run", "--help"}} {
		out, err := runCLI(t, args...)
		if err != nil && exitCode(err) != 0 {
			t.Errorf("%v: %v", args, err)
		}
		if !strings.Contains(out, "Usage") {
			t.Errorf("%v printed no usage: %q", args, out)
		}
	}
	if out, _ := runCLI(t, "--help"); !strings.Contains(out, "brain schedules run --config FILE NAME") {
		t.Errorf("brain --help does not list schedules:\n%s", out)
	}
	if _, err := runCLI(t, "schedules"); err == nil {
		t.Error("schedules without a subcommand succeeded")
	}
	if _, err := runCLI(t, "schedules", "bogus"); err == nil {
		t.Error("unknown subcommand accepted")
	}
	if _, err := runCLI(t, "schedules", "run", "--config", "x.yaml"); err == nil || !strings.Contains(err.Error(), "NAME") {
		t.Errorf("run without a name: %v", err)
	}
}

// TestSchedules_ListAndRun runs the CLI against a config whose daemon is
// down, then up, then down again.
func TestSchedules_ListAndRun(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	dir := t.TempDir()
	addr := freeAddr(t)
	configPath := writeSchedulesConfig(t, dir, addr, fake.URL())

	out, err := runCLI(t, "schedules", "list", "--config", configPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !regexp.MustCompile(`^NAME\s+CRON\s+TIMEZONE\s+NEXT FIRE\s+LAST RUN$`).MatchString(lines[0]) {
		t.Fatalf("list output:\n%s", out)
	}
	if !regexp.MustCompile(`^digest\s+0 9 \* \* 1-5\s+Europe/Paris\s+\d{4}-\d\d-\d\d 09:00 CES?T\s+never$`).MatchString(lines[1]) {
		t.Fatalf("digest line: %q", lines[1])
	}
	if !regexp.MustCompile(`^paused\s+0 12 \* \* \*\s+UTC\s+disabled\s+never$`).MatchString(lines[2]) {
		t.Fatalf("paused line: %q", lines[2])
	}
	jsonOut, err := runCLI(t, "schedules", "list", "--json", "--config", configPath)
	var listed []map[string]any
	if err != nil || json.Unmarshal([]byte(jsonOut), &listed) != nil || len(listed) != 2 {
		t.Fatalf("list --json: %v\n%s", err, jsonOut)
	}
	if _, err := runCLI(t, "schedules", "run", "--config", configPath, "digest"); err == nil || !strings.Contains(err.Error(), "is `brain serve` running") {
		t.Fatalf("run with the daemon down: %v", err)
	}

	cfg, err := config.Load(configPath, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	app, err := bot.New(context.Background(), cfg, bot.Options{Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app.Shutdown(context.Background())

	out, err = runCLI(t, "schedules", "run", "--config", configPath, "digest")
	if err != nil || !regexp.MustCompile(`^started run of digest for \S+: session ses_\w+ \(running\)\n$`).MatchString(out) {
		t.Fatalf("run: %v %q", err, out)
	}
	if _, err := runCLI(t, "schedules", "run", "--config", configPath, "nope"); err == nil || !strings.Contains(err.Error(), `no schedule named "nope"`) {
		t.Fatalf("run of an unknown schedule: %v", err)
	}
	// The run shows in the list once it is done. The deadline only turns a
	// hang into a failure.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err = runCLI(t, "schedules", "list", "--config", configPath)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`(?m)^digest .*completed \(\d{4}-\d\d-\d\d \d\d:\d\d CES?T\)$`).MatchString(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never shows as completed:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
