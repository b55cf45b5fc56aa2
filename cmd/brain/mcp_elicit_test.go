package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brain/engine/model/fakemodel"
	"brain/tools/mcp/mcptest"
)

// TestServe_MCPElicitationSurvivesSIGKILL: a 2026-07-28 server asks for
// input during a call; `brain serve` is SIGKILLed while the question is
// open and started again; the answer, given after the restart, sends the
// call again with it, once, and the turn completes.
func TestServe_MCPElicitationSurvivesSIGKILL(t *testing.T) {
	ss := mcptest.New(t, mcptest.Seat())
	url := ss.URL + "/mcp"
	fake := fakemodel.New()
	defer fake.Close()
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`listen: %s
data_dir: %s
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
    tools: [travel]
mcp_servers:
  - id: travel
    url: %s
`, addr, filepath.Join(dir, "data"), fake.URL(), url)
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, config, addr)
	fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "travel__book", Input: `{}`}),
		fakemodel.Text("Your seat is booked."),
	)
	var s apiSession
	if st := d.post("/v1/sessions", map[string]any{"message": "book me a seat"}, &s); st != 201 {
		t.Fatalf("create: %d", st)
	}
	var open struct {
		Status   string `json:"status"`
		Question *struct {
			ID string `json:"id"`
		} `json:"question"`
	}
	deadline := time.Now().Add(time.Minute)
	for open.Question == nil || open.Status != "awaiting_input" {
		if time.Now().After(deadline) {
			t.Fatalf("no open question: %+v\n%s", open, d.logs)
		}
		time.Sleep(20 * time.Millisecond)
		d.get("/v1/sessions/"+s.ID, &open)
	}

	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	d = startDaemon(t, config, addr)

	body := map[string]any{"type": "user.message", "text": "window", "answer": map[string]any{"question_id": open.Question.ID, "value": "v:window"}}
	if st := d.post("/v1/sessions/"+s.ID+"/events", body, nil); st != 202 {
		t.Fatalf("answer: %d", st)
	}
	d.waitTurnsDone(s.ID, 2)
	d.waitStatus(s.ID, "idle")
	asked, answered := ss.Counts()
	if asked != 1 || len(answered) != 1 || !strings.Contains(answered[0], `"seat":"window"`) {
		t.Fatalf("the server was asked %d times and got %v, want one call and one answer", asked, answered)
	}
}
