package main

import (
	"context"
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
	"brain/engine"
	"brain/engine/model/fakemodel"
)

func TestSessions_Compact(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	dir := t.TempDir()
	addr := freeAddr(t)
	cfgText := fmt.Sprintf(`listen: %s
data_dir: %s
api_keys: [cli-test-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f]
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
`, addr, filepath.Join(dir, "data"), fake.URL())
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "sessions", "compact", "--config", path); err == nil || !strings.Contains(err.Error(), "ID") {
		t.Errorf("compact without an id: %v", err)
	}
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
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

	ctx := context.Background()
	eng := app.Engine()
	s, _, err := eng.CreateSession(ctx, engine.NewSession{Agent: "default", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		fake.Push(fakemodel.Text(fmt.Sprintf("answer %d", i)))
		if _, _, err := eng.Send(ctx, s.ID, engine.Input{Text: fmt.Sprintf("question %d", i)}); err != nil {
			t.Fatal(err)
		}
		waitIdleTurns(t, eng, s.ID, i+1)
	}
	fake.Push(fakemodel.Text("SUMMARY"))
	out, err := runCLI(t, "sessions", "compact", "--config", path, s.ID)
	if err != nil || !regexp.MustCompile(`^session `+s.ID+` compacted: about \d+ -> \d+ tokens \(0 tool results shortened, events 1-\d+ summarised\)\n$`).MatchString(out) {
		t.Fatalf("compact: %v %q", err, out)
	}
	if _, err := runCLI(t, "sessions", "compact", "--config", path, "ses_nope"); err == nil || !strings.Contains(err.Error(), "not_found") && !strings.Contains(err.Error(), "not found") {
		t.Errorf("compact of an unknown session: %v", err)
	}
}

// waitIdleTurns waits until n turns of the session completed and it is
// idle; the deadline only turns a hang into a failure.
func waitIdleTurns(t *testing.T, eng *engine.Engine, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		changed := eng.Changed(id)
		s, err := eng.Session(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := eng.Events(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, ev := range evs {
			if ev.Type == engine.EventTurnCompleted {
				done++
			}
		}
		if s.Status == engine.StatusIdle && done >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %d turns, status %s", id, done, s.Status)
		}
		select {
		case <-changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}
