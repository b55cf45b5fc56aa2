package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"brain/engine/model/fakemodel"
)

// seatServer is a 2026-07-28 MCP server whose book tool asks which seat
// with a multi round-trip request; it counts the first calls and the
// calls that came back with the answer.
type seatServer struct {
	mu       sync.Mutex
	asked    int
	answered []string // the inputResponses of each call sent again
}

func newSeatServer(t *testing.T) (*seatServer, string) {
	t.Helper()
	ss := &seatServer{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage            `json:"id"`
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		var result any
		switch req.Method {
		case "server/discover":
			result = map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "travel", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "book", "description": "Book a seat",
				"inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnlyHint": true}}}}
		case "tools/call":
			ss.mu.Lock()
			if req.Params["inputResponses"] == nil {
				ss.asked++
				result = map[string]any{"resultType": "input_required", "requestState": "st-1",
					"inputRequests": map[string]any{"seat": map[string]any{"method": "elicitation/create", "params": map[string]any{
						"message": "Which seat?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
							"seat": map[string]any{"type": "string", "enum": []string{"aisle", "window"}}}},
					}}}}
			} else {
				ss.answered = append(ss.answered, string(req.Params["inputResponses"]))
				result = map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "booked"}}}
			}
			ss.mu.Unlock()
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(hs.Close)
	return ss, hs.URL + "/mcp"
}

func (ss *seatServer) counts() (int, []string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.asked, append([]string(nil), ss.answered...)
}

// TestServe_MCPElicitationSurvivesSIGKILL: a 2026-07-28 server asks for
// input during a call; `brain serve` is SIGKILLed while the question is
// open and started again; the answer, given after the restart, sends the
// call again with it, once, and the turn completes.
func TestServe_MCPElicitationSurvivesSIGKILL(t *testing.T) {
	ss, url := newSeatServer(t)
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
	asked, answered := ss.counts()
	if asked != 1 || len(answered) != 1 || !strings.Contains(answered[0], `"seat":"window"`) {
		t.Fatalf("the server was asked %d times and got %v, want one call and one answer", asked, answered)
	}
}
