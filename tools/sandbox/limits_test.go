package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// call runs command and returns its result or its tool error.
func call(t *testing.T, s *Sandboxes, session, command string, timeout int) (result, error) {
	t.Helper()
	return callTool(context.Background(), t, s, session, map[string]any{"command": command, "timeoutSeconds": timeout})
}

func TestSandbox_DefaultLimitsApply(t *testing.T) {
	s := newTest(t, Config{})
	r := sh(t, s, "l", "cat /proc/self/limits")
	for _, want := range []string{
		`Max processes\s+1024\s+1024\s`,
		`Max data size\s+4294967296\s+4294967296\s`,
		`Max cpu time\s+600\s+601\s`,
		`Max file size\s+1073741824\s+1073741824\s`,
	} {
		if !matches(want, r.Stdout) {
			t.Errorf("limits lack %s:\n%s", want, r.Stdout)
		}
	}
	desc := s.Tool().Description
	for _, want := range []string{"at most 1024 processes", "4 GiB of memory and 600 CPU seconds", "past 1 GiB", "at most 2 GiB"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q: %s", want, desc)
		}
	}
}

func TestSandbox_LimitsOff(t *testing.T) {
	s := newTest(t, Config{MaxProcesses: -1, MaxMemoryBytes: -1, MaxCPUSeconds: -1, MaxFileBytes: -1, MaxWorkspaceBytes: -1})
	for _, a := range s.args(s.feat, s.etcDir, "/ws", "", "true") {
		if strings.Contains(a, "prlimit") {
			t.Fatalf("prlimit runs with every limit off: %q", a)
		}
	}
	if r := sh(t, s, "off", "head -c 3000 /dev/urandom > f && echo ok"); r.Stdout != "ok\n" {
		t.Fatalf("got %+v", r)
	}
	if d := s.Tool().Description; strings.Contains(d, "at most") {
		t.Fatalf("description names limits that are off: %s", d)
	}
}

func TestSandbox_ForkBombIsBounded(t *testing.T) {
	s := newTest(t, Config{MaxProcesses: 20})
	// Each spawn that succeeds is counted in /workspace/count; the loop
	// stops at the first fork that fails (dash), or runs into the timeout
	// while the shell retries (bash).
	r, err := call(t, s, "bomb", `i=0; while [ $i -lt 100 ]; do sleep 60 & i=$((i+1)); echo $i > count; done; echo spawned all`, 10)
	if err == nil && (r.ExitCode == 0 || strings.Contains(r.Stdout, "spawned all")) {
		t.Fatalf("100 processes ran under a limit of 20: %+v", r)
	}
	b, rerr := os.ReadFile(filepath.Join(s.cfg.Root, "bomb", "workspace", "count"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if rerr != nil || n < 5 || n > 20 {
		t.Fatalf("spawned %q (%v) under a limit of 20; result %+v, error %v", b, rerr, r, err)
	}
	if err == nil && !strings.Contains(r.Stderr, "fork") {
		t.Errorf("stderr does not say why: %q", r.Stderr)
	}
}

func TestSandbox_MemoryIsBounded(t *testing.T) {
	s := newTest(t, Config{MaxMemoryBytes: 32 << 20})
	if r := sh(t, s, "mem", "dd if=/dev/zero of=/dev/null bs=1M count=1 2>/dev/null && echo small ok"); r.Stdout != "small ok\n" {
		t.Fatalf("1 MiB under a 32 MiB limit: %+v", r)
	}
	r := sh(t, s, "mem", "dd if=/dev/zero of=/dev/null bs=64M count=1")
	if r.ExitCode == 0 {
		t.Fatalf("a 64 MiB buffer under a 32 MiB limit: %+v", r)
	}
}

func TestSandbox_FileSizeIsBounded(t *testing.T) {
	s := newTest(t, Config{MaxFileBytes: 1 << 20})
	r := sh(t, s, "fsize", "yes > big; echo status=$?")
	if r.Stdout == "status=0\n" {
		t.Fatalf("yes > big ended well: %+v", r)
	}
	fi, err := os.Stat(filepath.Join(s.cfg.Root, "fsize", "workspace", "big"))
	if err != nil || fi.Size() != 1<<20 {
		t.Fatalf("big: %v, %v; want 1 MiB exactly", fi, err)
	}
}

func TestSandbox_CPUTimeIsBounded(t *testing.T) {
	s := newTest(t, Config{MaxCPUSeconds: 1})
	r, err := call(t, s, "cpu", "while :; do :; done", 60)
	if err != nil {
		t.Fatalf("the spin was not stopped by its CPU limit: %v", err)
	}
	if r.ExitCode != 128+int(syscall.SIGXCPU) {
		t.Fatalf("got %+v; want the exit of SIGXCPU", r)
	}
}

func TestSandbox_WorkspaceBudget(t *testing.T) {
	s := newTest(t, Config{MaxWorkspaceBytes: 1 << 20})
	if r := sh(t, s, "ws", "head -c 500000 /dev/urandom > half && echo fine"); r.Stdout != "fine\n" {
		t.Fatalf("under the budget: %+v", r)
	}
	_, err := call(t, s, "ws", "head -c 2000000 /dev/urandom > big; echo wrote", 30)
	te := toolError(t, err)
	for _, want := range []string{"exited with 0", "/workspace is 2.", "over its 1 MiB budget (tools.sandbox_exec.max_workspace_bytes)", "delete files", "wrote"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message lacks %q: %s", want, te.Message)
		}
	}
	if te.UnknownOutcome {
		t.Errorf("over budget is a known outcome: %v", te)
	}
	// Still over: the next command says so too, and may delete.
	if _, err := call(t, s, "ws", "ls", 30); err == nil {
		t.Fatal("a command over budget returned a result")
	}
	if r := sh(t, s, "ws", "rm big && echo gone"); r.Stdout != "gone\n" {
		t.Fatalf("after rm: %+v", r)
	}
}

// Brain as an unprivileged user reads the workspace with the sandbox's own
// permissions: what it cannot read fails the budget check, it does not
// escape it.
func TestSandbox_WorkspaceBudgetUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	s := newTest(t, Config{})
	_, err := call(t, s, "hide", "mkdir -p d && head -c 1000 /dev/urandom > d/f && chmod 000 d", 30)
	if te := toolError(t, err); !strings.Contains(te.Message, "/workspace/d cannot be read") {
		t.Fatalf("got %v", te)
	}
	if r := sh(t, s, "hide", "chmod 700 d && echo ok"); r.Stdout != "ok\n" {
		t.Fatalf("after chmod: %+v", r)
	}
}

func TestDiskUsage(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	one, err := diskUsage(dir)
	if err != nil || one < 100_000 {
		t.Fatalf("one file: %d, %v", one, err)
	}
	// A hard link adds nothing, a symlink only itself, a copy its size.
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr", filepath.Join(dir, "usr")); err != nil {
		t.Fatal(err)
	}
	if n, err := diskUsage(dir); err != nil || n > one+8192 {
		t.Fatalf("with a hard link and a symlink: %d, was %d, %v", n, one, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := diskUsage(dir); err != nil || n < one+100_000 {
		t.Fatalf("with a copy: %d, was %d, %v", n, one, err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 10: "64 KiB",
		1 << 30: "1 GiB", 1288490189: "1.2 GiB", 2 << 40: "2 TiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func matches(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
