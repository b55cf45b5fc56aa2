package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"brain/tools"
	brainmcp "brain/tools/mcp"
)

// npmCommand installs the reference server the stdio tests run.
const npmCommand = "npm ci --prefix tools/mcp/testdata/peer"

// everything is @modelcontextprotocol/server-everything (pinned in
// testdata/peer/package.json) over stdio. Set BRAIN_SKIP_NODE=1 on a machine
// without node; otherwise a missing install fails the test.
func everything(t *testing.T, env map[string]string) brainmcp.ServerConfig {
	t.Helper()
	if os.Getenv("BRAIN_SKIP_NODE") == "1" {
		t.Skip("BRAIN_SKIP_NODE=1: not running the node MCP server")
	}
	entry, err := filepath.Abs(filepath.Join("testdata", "peer", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("server-everything is not installed (%v): run `%s` from the repository root, or set BRAIN_SKIP_NODE=1 to skip", err, npmCommand)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: install it, or set BRAIN_SKIP_NODE=1 to skip")
	}
	e := map[string]string{"PATH": filepath.Dir(node) + ":/usr/bin:/bin"}
	for k, v := range env {
		e[k] = v
	}
	return brainmcp.ServerConfig{ID: "everything", Transport: brainmcp.TransportStdio, Command: "node", Args: []string{entry, "stdio"}, Env: e}
}

func TestEverything_Stdio(t *testing.T) {
	const apiToken = "everything-token-0123456789"
	cfg := everything(t, map[string]string{"MCP_TEST_VISIBLE": "yes", "MCP_API_TOKEN": apiToken})
	// The child must not see brain's environment.
	t.Setenv("BRAIN_TEST_SECRET", "s3cr3t")
	b, log := connect(t, []brainmcp.ServerConfig{cfg})
	ctx := context.Background()

	t.Run("catalog", func(t *testing.T) {
		for _, n := range []string{"everything__echo", "everything__get-sum", "everything__get-env",
			"everything__list_resources", "everything__read_resource", "everything__trigger-long-running-operation"} {
			if !has(b, n) {
				t.Errorf("catalog %v lacks %s", names(b), n)
			}
		}
		if _, err := tools.NewSet(b.Tools()...); err != nil {
			t.Errorf("the engine rejects the catalog: %v", err)
		}
	})

	t.Run("list_changed", func(t *testing.T) {
		// The server registers tools after initialization and says so.
		eventually(t, "the notification is handled", func() bool {
			return strings.Contains(log.String(), `msg="mcp server announced a tool list change" mcp_server=everything`)
		})
	})

	t.Run("echo and get-sum", func(t *testing.T) {
		if out, te := run(t, ctx, b, "everything__echo", `{"message":"hi"}`); te != nil || content(t, out) != "Echo: hi" {
			t.Errorf("echo: %s, %v", out, te)
		}
		if out, te := run(t, ctx, b, "everything__get-sum", `{"a":2,"b":3}`); te != nil || !strings.Contains(content(t, out), "is 5") {
			t.Errorf("get-sum: %s, %v", out, te)
		}
		// Arguments the server rejects: it answered, so the outcome is known.
		_, err := find(t, b, "everything__get-sum").Run(ctx, tools.Call{Input: json.RawMessage(`{"a":"two","b":3}`)})
		if te, ok := err.(*tools.Error); !ok || te.UnknownOutcome {
			t.Errorf("get-sum with a string: %v", err)
		}
	})

	t.Run("get-env shows only the configured env", func(t *testing.T) {
		out, te := run(t, ctx, b, "everything__get-env", `{}`)
		if te != nil {
			t.Fatal(te)
		}
		text := content(t, out)
		var env map[string]string
		if err := json.Unmarshal([]byte(text), &env); err != nil {
			t.Fatalf("get-env: %v\n%s", err, text)
		}
		var keys []string
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, ",") != "MCP_API_TOKEN,MCP_TEST_VISIBLE,PATH" {
			t.Errorf("the child's environment has %v", keys)
		}
		if env["MCP_TEST_VISIBLE"] != "yes" || env["MCP_API_TOKEN"] != "[REDACTED]" {
			t.Errorf("values: %v", env)
		}
		if strings.Contains(text, "s3cr3t") || strings.Contains(text, apiToken) || strings.Contains(log.String(), apiToken) {
			t.Errorf("a secret leaked: %s", text)
		}
	})

	t.Run("resources", func(t *testing.T) {
		out, te := run(t, ctx, b, "everything__list_resources", `{}`)
		if te != nil || !strings.Contains(string(out), `"uri":"demo://resource/static/document/architecture.md"`) {
			t.Fatalf("list_resources: %s, %v", out, te)
		}
		if !strings.Contains(string(out), `demo://resource/dynamic/text/{resourceId}`) {
			t.Errorf("list_resources lacks the templates: %s", out)
		}
		out, te = run(t, ctx, b, "everything__read_resource", `{"uri":"demo://resource/static/document/architecture.md"}`)
		var res struct {
			Contents []struct{ URI, MIMEType, Text string }
		}
		if te != nil || json.Unmarshal(out, &res) != nil || len(res.Contents) != 1 || res.Contents[0].Text == "" {
			t.Errorf("read_resource: %s, %v", out, te)
		}
		out, te = run(t, ctx, b, "everything__read_resource", `{"uri":"demo://resource/dynamic/text/7"}`)
		if te != nil || !strings.Contains(string(out), "Resource 7") {
			t.Errorf("read a templated resource: %s, %v", out, te)
		}
		if _, te := run(t, ctx, b, "everything__read_resource", `{"uri":"demo://nowhere"}`); te == nil || te.UnknownOutcome {
			t.Errorf("read a missing resource: %+v", te)
		}
	})

	t.Run("progress", func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		call := tools.Call{Input: json.RawMessage(`{"duration":0.2,"steps":2}`), Progress: func(_ context.Context, data json.RawMessage) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(data))
			return nil
		}}
		out, err := find(t, b, "everything__trigger-long-running-operation").Run(ctx, call)
		if err != nil || !strings.Contains(content(t, out), "completed") {
			t.Fatalf("long running operation: %s, %v", out, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(got, " ") != `{"progress":1,"total":2} {"progress":2,"total":2}` {
			t.Errorf("progress forwarded: %v", got)
		}
	})

	t.Run("Close kills the child", func(t *testing.T) {
		pid := brainmcp.ChildPID(b, "everything")
		if pid == 0 || !alive(pid) {
			t.Fatalf("child %d is not running", pid)
		}
		b.Close()
		eventually(t, "the child is gone", func() bool { return !alive(pid) })
		if len(b.Tools()) != 0 {
			t.Error("tools offered after Close")
		}
	})
}
