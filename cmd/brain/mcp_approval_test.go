package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// tracker is an MCP server whose create_issue is a write (readOnlyHint
// false); it counts every call by title. A call titled "hang" never
// answers until release is closed.
type tracker struct {
	mu      sync.Mutex
	calls   map[string]int
	reached chan struct{} // closed when the "hang" call arrives
	release chan struct{}
}

func newTracker(t *testing.T) (*tracker, string) {
	t.Helper()
	tr := &tracker{calls: map[string]int{}, reached: make(chan struct{}), release: make(chan struct{})}
	srv := server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("create_issue", mcp.WithDescription("Create an issue in the tracker"),
		mcp.WithString("title", mcp.Required()), mcp.WithReadOnlyHintAnnotation(false)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			title := r.GetString("title", "")
			tr.mu.Lock()
			tr.calls[title]++
			tr.mu.Unlock()
			if title == "hang" {
				close(tr.reached)
				select {
				case <-tr.release:
				case <-ctx.Done():
				}
				return nil, ctx.Err()
			}
			return mcp.NewToolResultText("created " + title), nil
		})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(func() {
		close(tr.release)
		hs.Close()
	})
	return tr, hs.URL + "/mcp"
}

func (tr *tracker) count(title string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.calls[title]
}

// propose has the model call tracker__create_issue in a new session and
// returns the pending approval.
func propose(t *testing.T, d *daemon, fake *fakemodel.Server, title string) engine.Approval {
	t.Helper()
	fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "tracker__create_issue", Input: fmt.Sprintf(`{"title":%q}`, title)}),
		fakemodel.Text("I proposed the issue."),
	)
	var s apiSession
	if st := d.post("/v1/sessions", map[string]any{"message": "file " + title}, &s); st != 201 {
		t.Fatalf("create: %d", st)
	}
	deadline := time.Now().Add(30 * time.Second)
	for countTypes(d.events(s.ID), "turn.completed") < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not complete")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var list struct{ Approvals []engine.Approval }
	d.get("/v1/approvals?status=pending&session_id="+s.ID, &list)
	if len(list.Approvals) != 1 {
		t.Fatalf("pending approvals %+v", list.Approvals)
	}
	return list.Approvals[0]
}

func (d *daemon) waitApproval(id string, want engine.ApprovalStatus) engine.Approval {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var a engine.Approval
		d.get("/v1/approvals/"+id, &a)
		if a.Status == want {
			return a
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("approval %s is %s, want %s", id, a.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServe_MCPWriteWaitsForApproval: with approval: annotations an MCP
// write becomes an approval card instead of running; approved through the
// API, it reaches the server exactly once. A second write is approved and
// `brain serve` is SIGKILLed while the server holds the call: after the
// restart the approval is unconfirmed and the call was not sent again.
func TestServe_MCPWriteWaitsForApproval(t *testing.T) {
	tr, url := newTracker(t)
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
    tools: [tracker]
mcp_servers:
  - id: tracker
    url: %s
    approval: annotations
`, addr, filepath.Join(dir, "data"), fake.URL(), url)
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, config, addr)

	a := propose(t, d, fake, "Printer on fire")
	if tr.count("Printer on fire") != 0 {
		t.Fatal("the write reached the server before approval")
	}
	facts := map[string]string{}
	for _, f := range a.Card.Facts {
		facts[f.Label] = f.Value
	}
	if a.Tool != "tracker__create_issue" || facts["Server"] != "tracker" || facts["Tool"] != "create_issue" ||
		facts["Arguments"] != `{"title":"Printer on fire"}` {
		t.Fatalf("approval %+v", a)
	}
	if st := d.post("/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "approve", "by": "ann"}, nil); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	d.waitApproval(a.ID, engine.ApprovalApplied)
	if n := tr.count("Printer on fire"); n != 1 {
		t.Fatalf("the approved write reached the server %d times, want once", n)
	}

	h := propose(t, d, fake, "hang")
	if st := d.post("/v1/approvals/"+h.ID+"/decision", map[string]any{"decision": "approve", "by": "ann"}, nil); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	<-tr.reached
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()

	d = startDaemon(t, config, addr)
	un := d.waitApproval(h.ID, engine.ApprovalUnconfirmed)
	if n := tr.count("hang"); n != 1 {
		t.Fatalf("the write cut by the kill reached the server %d times, want once (approval %+v)", n, un)
	}
	if n := tr.count("Printer on fire"); n != 1 {
		t.Fatalf("the applied write was sent again after the restart: %d", n)
	}
}
