package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	brainmcp "brain/tools/mcp"
)

// goPeer runs this test binary as a stdio MCP server (see TestMain).
func goPeer(t *testing.T, id string, env map[string]string) brainmcp.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: a race-enabled child would sleep a second before exiting.
	e := map[string]string{peerEnv: "stdio", "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	return brainmcp.ServerConfig{ID: id, Transport: brainmcp.TransportStdio, Command: exe, Env: e}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, statErr := os.Stat("/proc/self"); statErr != nil {
			return processExists(pid) // no procfs
		}
		return false
	}
	// The state follows the command name, which is in parentheses.
	s := string(stat)
	rest := s[strings.LastIndexByte(s, ')')+1:]
	f := strings.Fields(rest)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func TestStdio_Calls(t *testing.T) {
	b, _ := connect(t, []brainmcp.ServerConfig{goPeer(t, "go", nil)})
	ctx := context.Background()
	if out, te := run(t, ctx, b, "go__greet", `{"name":"Ann"}`); te != nil || content(t, out) != "hello Ann" {
		t.Errorf("greet: %s, %v", out, te)
	}
	if _, te := run(t, ctx, b, "go__fail", `{}`); te == nil || te.UnknownOutcome || !strings.Contains(te.Message, "quota exceeded") {
		t.Errorf("fail: %+v", te)
	}
	if _, te := run(t, ctx, b, "go__broken", `{}`); te == nil || te.UnknownOutcome || !strings.Contains(te.Message, "database is locked") {
		t.Errorf("broken: %+v", te)
	}
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, te := run(t, tctx, b, "go__block", `{}`); te == nil || !te.UnknownOutcome {
		t.Errorf("block: %+v", te)
	}
	// The connection survives a cancelled call.
	if out, te := run(t, ctx, b, "go__greet", `{"name":"Bo"}`); te != nil || content(t, out) != "hello Bo" {
		t.Errorf("greet after a cancelled call: %s, %v", out, te)
	}
}

func TestStdio_OnlyConfiguredEnv(t *testing.T) {
	t.Setenv("BRAIN_TEST_SECRET", "s3cr3t-of-brain")
	const key = "key-0123456789abcdef"
	dir := t.TempDir()
	cfg := goPeer(t, "go", map[string]string{"MCP_TEST_VISIBLE": "yes", "MCP_API_KEY": key})
	cfg.Cwd = dir
	b, log := connect(t, []brainmcp.ServerConfig{cfg})
	out, te := run(t, context.Background(), b, "go__env", `{}`)
	if te != nil {
		t.Fatal(te)
	}
	text := content(t, out)
	if strings.Contains(text, "s3cr3t") || strings.Contains(text, key) || strings.Contains(log.String(), key) {
		t.Fatalf("a secret leaked:\n%s", text)
	}
	real, _ := filepath.EvalSymlinks(dir)
	got := strings.Split(text, "\n")
	sort.Strings(got)
	// Every configured value is treated as a secret, but PATH and the like.
	want := []string{"BRAIN_MCP_PEER=[REDACTED]", "CWD=" + real, "GORACE=[REDACTED]", "MCP_API_KEY=[REDACTED]", "MCP_TEST_VISIBLE=yes", "PATH=" + brainmcp.DefaultPath}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the child's environment:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestStdio_ListChanged(t *testing.T) {
	b, _ := connect(t, []brainmcp.ServerConfig{goPeer(t, "go", nil)}, brainmcp.WithRefreshInterval(0))
	var changes atomic.Int32
	b.OnChange(func() { changes.Add(1) })
	if has(b, "go__added") {
		t.Fatal("the tool is there before it was added")
	}
	if _, te := run(t, context.Background(), b, "go__add_tool", `{}`); te != nil {
		t.Fatal(te)
	}
	eventually(t, "the added tool is offered", func() bool { return has(b, "go__added") })
	eventually(t, "OnChange is called", func() bool { return changes.Load() > 0 })
	if out, te := run(t, context.Background(), b, "go__added", `{}`); te != nil || content(t, out) != "new" {
		t.Errorf("added: %s, %v", out, te)
	}
}

func TestStdio_CloseKillsProcessGroup(t *testing.T) {
	b, _ := connect(t, []brainmcp.ServerConfig{goPeer(t, "go", nil)})
	pid := brainmcp.ChildPID(b, "go")
	out, te := run(t, context.Background(), b, "go__spawn", `{}`)
	if te != nil {
		t.Fatal(te)
	}
	grandchild, err := strconv.Atoi(content(t, out))
	if err != nil || pid == 0 || !alive(pid) || !alive(grandchild) {
		t.Fatalf("child %d, grandchild %s (%v): not running", pid, out, err)
	}
	start := time.Now()
	b.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	eventually(t, "the child and its child are gone", func() bool { return !alive(pid) && !alive(grandchild) })
}

func TestStdio_ChildDiesDuringCall(t *testing.T) {
	b, _ := connect(t, []brainmcp.ServerConfig{goPeer(t, "go", nil)}, brainmcp.WithRefreshInterval(0))
	first := brainmcp.ChildPID(b, "go")
	var changes atomic.Int32
	b.OnChange(func() { changes.Add(1) })

	// The child read the call and died: it may have acted.
	_, te := run(t, context.Background(), b, "go__crash", `{}`)
	if te == nil || !te.UnknownOutcome {
		t.Fatalf("crash: %+v", te)
	}
	// The bridge notices and starts a new child.
	eventually(t, "a new child serves the tools", func() bool {
		pid := brainmcp.ChildPID(b, "go")
		return pid != 0 && pid != first && has(b, "go__greet")
	})
	if changes.Load() == 0 {
		t.Error("OnChange was not called")
	}
	if out, te := run(t, context.Background(), b, "go__greet", `{"name":"Ann"}`); te != nil || content(t, out) != "hello Ann" {
		t.Errorf("greet after the restart: %s, %v", out, te)
	}
	if alive(first) {
		t.Errorf("the dead child %d was not reaped", first)
	}
}

func TestStdio_ConnectTimeoutKillsTheChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// A server that never answers, in a shell that leaves a grandchild.
	silent := brainmcp.ServerConfig{ID: "silent", Transport: brainmcp.TransportStdio,
		Command: "sh", Args: []string{"-c", `sleep 300 & echo $$ $! > "$1"; exec sleep 300`, "sh", pidFile}}
	start := time.Now()
	// The timeout leaves room for the race-built peer to start on a loaded
	// machine (it missed 500 ms there); the silent server misses any timeout.
	b, log := connect(t, []brainmcp.ServerConfig{silent, goPeer(t, "go", nil)}, brainmcp.WithConnectTimeout(3*time.Second))
	if d := time.Since(start); d > 12*time.Second {
		t.Errorf("Connect took %v", d)
	}
	if !strings.Contains(log.String(), "mcp_server=silent") || !strings.Contains(log.String(), "connect timeout") {
		t.Errorf("the log does not report the timeout:\n%s", log)
	}
	if !has(b, "go__greet") {
		t.Errorf("the other server is missing: %v\n%s", names(b), log)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(raw)) {
		pid, _ := strconv.Atoi(f)
		eventually(t, "process "+f+" is gone", func() bool { return !alive(pid) })
	}
}
