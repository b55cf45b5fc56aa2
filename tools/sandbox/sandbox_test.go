package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/tools"
)

// newTest starts sandboxes over real bwrap under a temporary root. Without a
// working bwrap the test fails (CI installs bubblewrap) unless
// BRAIN_SKIP_BWRAP=1.
func newTest(t *testing.T, cfg Config) *Sandboxes {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = filepath.Join(t.TempDir(), "sandboxes")
	}
	s, err := New(cfg)
	if err != nil {
		if os.Getenv("BRAIN_SKIP_BWRAP") == "1" {
			t.Skipf("BRAIN_SKIP_BWRAP=1: %v", err)
		}
		t.Fatalf("sandbox_exec tests need bubblewrap (apt-get install -y bubblewrap), "+
			"or BRAIN_SKIP_BWRAP=1 to skip them: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// callTool runs one sandbox_exec call the way the engine does: input
// validated against the schema first, output after.
func callTool(ctx context.Context, t testing.TB, s *Sandboxes, session string, args map[string]any) (result, error) {
	t.Helper()
	tool, err := tools.Compile(s.Tool())
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	raw, _ := json.Marshal(args)
	if err := tool.ValidateInput(raw); err != nil {
		return result{}, tools.Failed("%v", err)
	}
	out, err := tool.Run(ctx, tools.Call{Input: raw, SessionID: session, ToolCallID: "call"})
	if err != nil {
		return result{}, err
	}
	if err := tool.ValidateOutput(out); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	if len(out) > s.cfg.MaxOutputBytes {
		t.Fatalf("output is %d bytes, over %d", len(out), s.cfg.MaxOutputBytes)
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	return r, nil
}

// sh runs command in session and fails the test on a tool error.
func sh(t *testing.T, s *Sandboxes, session, command string) result {
	t.Helper()
	r, err := callTool(context.Background(), t, s, session, map[string]any{"command": command, "timeoutSeconds": 30})
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return r
}

func toolError(t *testing.T, err error) *tools.Error {
	t.Helper()
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("want a tools.Error, got %v", err)
	}
	return te
}

func TestSandbox_ExitCodeAndStreams(t *testing.T) {
	s := newTest(t, Config{})
	r := sh(t, s, "s1", "echo out; echo err >&2; exit 3")
	if r.ExitCode != 3 || r.Stdout != "out\n" || r.Stderr != "err\n" || r.Truncated {
		t.Fatalf("got %+v", r)
	}
	r = sh(t, s, "s1", "pwd; id -un; hostname")
	if r.ExitCode != 0 || r.Stdout != "/workspace\nsandbox\nsandbox\n" {
		t.Fatalf("got %+v", r)
	}
}

func TestSandbox_WorkspacePersistsPerSession(t *testing.T) {
	s := newTest(t, Config{})
	sh(t, s, "a", "echo kept > notes.txt; touch /tmp/gone")
	if r := sh(t, s, "a", "cat /workspace/notes.txt; test -e /tmp/gone; echo tmp=$?"); r.Stdout != "kept\ntmp=1\n" {
		t.Fatalf("second command in the session: %+v", r)
	}
	if r := sh(t, s, "b", "ls -A /workspace"); r.ExitCode != 0 || r.Stdout != "" {
		t.Fatalf("another session sees the workspace: %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.Root, "a", "workspace", "notes.txt"))
	if err != nil || string(b) != "kept\n" {
		t.Fatalf("host copy: %q, %v", b, err)
	}
	fi, err := os.Stat(filepath.Join(s.cfg.Root, "a", "workspace"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("workspace mode: %v, %v", fi.Mode(), err)
	}
	// An id that is not a plain name gets a distinct, safe directory.
	sh(t, s, "../a", "echo other > notes.txt")
	if r := sh(t, s, "a", "cat notes.txt"); r.Stdout != "kept\n" {
		t.Fatalf("session ../a wrote into a: %+v", r)
	}
}

func TestSandbox_Schema(t *testing.T) {
	s := newSandboxes(mustDefaults(t, Config{Root: t.TempDir()}))
	tool, err := tools.Compile(s.Tool())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"command":"true","timeoutSeconds":0}`,
		`{"command":"true","timeoutSeconds":1801}`,
		`{"command":"true","timeoutSeconds":1.5}`,
		`{"command":"true","timeoutSeconds":"10"}`,
		`{"command":""}`,
		`{}`,
		`{"command":"true","cwd":"/"}`,
	} {
		if tool.ValidateInput(json.RawMessage(bad)) == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	for _, good := range []string{`{"command":"true"}`, `{"command":"true","timeoutSeconds":1}`, `{"command":"true","timeoutSeconds":1800}`} {
		if err := tool.ValidateInput(json.RawMessage(good)); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	// Run refuses out-of-range values too, before anything runs (s has no
	// working bwrap: reaching it would fail differently).
	_, err = s.run(context.Background(), tools.Call{Input: json.RawMessage(`{"command":"true","timeoutSeconds":5000}`), SessionID: "x"})
	if te := toolError(t, err); te.UnknownOutcome || !strings.Contains(te.Message, "between 1 and 1800") {
		t.Fatalf("got %v", te)
	}
}

func TestSandbox_OutputCap(t *testing.T) {
	s := newTest(t, Config{MaxOutputBytes: 2048})
	r := sh(t, s, "s", "head -c 100000 /dev/zero | tr '\\0' a; echo; echo END; echo small >&2")
	if !r.Truncated || !strings.HasPrefix(r.Stdout, "aaaa") || !strings.HasSuffix(r.Stdout, "a\nEND\n") ||
		!strings.Contains(r.Stdout, "bytes omitted") || r.Stderr != "small\n" {
		t.Fatalf("got truncated=%v stderr=%q stdout=%q", r.Truncated, r.Stderr, r.Stdout)
	}
}

func TestSandbox_SessionsRunInParallelCommandsInOrder(t *testing.T) {
	s := newTest(t, Config{})
	run := func(sessions ...string) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for _, id := range sessions {
			wg.Go(func() { sh(t, s, id, "sleep 1") })
		}
		wg.Wait()
		return time.Since(start)
	}
	if d := run("p1", "p2", "p3"); d > 2500*time.Millisecond {
		t.Errorf("three sessions took %s: not in parallel", d)
	}
	if d := run("q", "q"); d < 2*time.Second {
		t.Errorf("two commands of one session took %s: they overlapped", d)
	}
}

func TestNew_WithoutBwrap(t *testing.T) {
	_, err := New(Config{Root: t.TempDir(), Bwrap: "/nonexistent/bwrap"})
	if err == nil || !strings.Contains(err.Error(), "install the bubblewrap package") {
		t.Fatalf("got %v", err)
	}
	if _, err := New(Config{Root: t.TempDir(), DefaultTimeout: time.Hour}); err == nil {
		t.Fatal("a default timeout over the max was accepted")
	}
}

func mustDefaults(t *testing.T, cfg Config) Config {
	t.Helper()
	cfg, err := withDefaults(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
