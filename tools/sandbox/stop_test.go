package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostSleeps lists the host's processes running `sleep <arg>` for the args.
func hostSleeps(t *testing.T, args ...string) []string {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range args {
			if bytes.Equal(b, []byte("sleep\x00"+a+"\x00")) {
				found = append(found, d.Name()+":"+a)
			}
		}
	}
	return found
}

func TestSandbox_TimeoutKillsDetachedProcesses(t *testing.T) {
	s := newTest(t, Config{})
	marks := []string{"987651", "987652", "987653"}
	command := "setsid sh -c 'sleep 987651 & echo $! > /workspace/bg.pid'; " +
		"(nohup setsid sleep 987652 >/dev/null 2>&1 &); " +
		"sh -c 'sleep 987653 &'; " +
		"echo started; echo warning >&2; sleep 60"

	// Watch from the host that the detached sleeps did run.
	seen := map[string]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			for _, f := range hostSleeps(t, marks...) {
				seen[f[strings.IndexByte(f, ':')+1:]] = true
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	start := time.Now()
	_, err := callTool(context.Background(), t, s, "t", map[string]any{"command": command, "timeoutSeconds": 2})
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()

	te := toolError(t, err)
	if te.UnknownOutcome {
		t.Fatalf("stop not confirmed: %v", te)
	}
	for _, want := range []string{"timed out after 2s", "sleep 987651", "started", "warning", "were stopped"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message lacks %q: %s", want, te.Message)
		}
	}
	if elapsed > 10*time.Second {
		t.Errorf("the call took %s", elapsed)
	}
	if len(seen) != len(marks) {
		t.Fatalf("the background sleeps never ran: saw %v", seen)
	}
	if left := hostSleeps(t, marks...); len(left) > 0 {
		t.Fatalf("processes survived the timeout: %v", left)
	}
	// Files written before the stop remain.
	if r := sh(t, s, "t", "test -s bg.pid && echo kept"); r.Stdout != "kept\n" {
		t.Fatalf("workspace after the timeout: %+v", r)
	}
}

func TestSandbox_BackgroundProcessesEndWithCommand(t *testing.T) {
	s := newTest(t, Config{})
	start := time.Now()
	r := sh(t, s, "bg", "setsid sleep 987654 & sleep 987655 & echo done")
	if r.ExitCode != 0 || r.Stdout != "done\n" || time.Since(start) > 10*time.Second {
		t.Fatalf("got %+v after %s", r, time.Since(start))
	}
	if left := hostSleeps(t, "987654", "987655"); len(left) > 0 {
		t.Fatalf("background processes outlived the command: %v", left)
	}
}

func TestSandbox_Cancelled(t *testing.T) {
	s := newTest(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err := callTool(ctx, t, s, "c", map[string]any{"command": "echo before; sleep 987656"})
	te := toolError(t, err)
	if te.UnknownOutcome || !strings.Contains(te.Message, "was cancelled") || !strings.Contains(te.Message, "before") {
		t.Fatalf("got %v", te)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %s", d)
	}
	if left := hostSleeps(t, "987656"); len(left) > 0 {
		t.Fatalf("survived the cancel: %v", left)
	}
}

func TestSandbox_Close(t *testing.T) {
	s := newTest(t, Config{})
	errc := make(chan error, 1)
	go func() {
		_, err := callTool(context.Background(), t, s, "x", map[string]any{"command": "sleep 987657"})
		errc <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); len(hostSleeps(t, "987657")) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if te := toolError(t, <-errc); te.UnknownOutcome || !strings.Contains(te.Message, "shutting down") {
		t.Fatalf("got %v", te)
	}
	if left := hostSleeps(t, "987657"); len(left) > 0 {
		t.Fatalf("survived Close: %v", left)
	}
	_, err := callTool(context.Background(), t, s, "x", map[string]any{"command": "true"})
	if te := toolError(t, err); !strings.Contains(te.Message, "shutting down") {
		t.Fatalf("after Close: %v", te)
	}
	_ = s.Close()
}

// fakeBwrap stands in for a bwrap that fails in ways the real one rarely
// does: it reports no sandbox pid 1, so a stop cannot be confirmed.
const fakeBwrap = `#!/bin/sh
for last; do :; done
case "$last" in
*setupfail*) echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2; exit 1 ;;
esac
printf x >&4
case "$last" in
*hang*) echo partial; exec sleep 987658 ;;
esac
echo "ran: $last"
`

func newFake(t *testing.T) *Sandboxes {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "bwrap")
	if err := os.WriteFile(path, []byte(fakeBwrap), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newSandboxes(mustDefaults(t, Config{Root: filepath.Join(dir, "root")}))
	s.bwrap = path
	s.grace = 300 * time.Millisecond
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSandbox_UnknownOutcomeGetsFreshSandbox(t *testing.T) {
	s := newFake(t)
	_, err := callTool(context.Background(), t, s, "u", map[string]any{"command": "hang", "timeoutSeconds": 1})
	te := toolError(t, err)
	if !te.UnknownOutcome || !strings.Contains(te.Message, "outcome is unknown") ||
		!strings.Contains(te.Message, "partial") || !strings.Contains(te.Message, "fresh sandbox") {
		t.Fatalf("got %v", te)
	}
	r, err := callTool(context.Background(), t, s, "u", map[string]any{"command": "echo again"})
	if err != nil || r.Stdout != "ran: echo again\n" || !strings.Contains(r.Notice, "replaced by a fresh one") {
		t.Fatalf("next command: %+v, %v", r, err)
	}
	r, err = callTool(context.Background(), t, s, "u", map[string]any{"command": "echo third"})
	if err != nil || r.Notice != "" {
		t.Fatalf("third command: %+v, %v", r, err)
	}
}

func TestSandbox_SetupFailureIsNotACommandResult(t *testing.T) {
	s := newFake(t)
	_, err := callTool(context.Background(), t, s, "f", map[string]any{"command": "setupfail"})
	te := toolError(t, err)
	if te.UnknownOutcome || !strings.Contains(te.Message, "could not be set up") || !strings.Contains(te.Message, "Can't mount proc") {
		t.Fatalf("got %v", te)
	}
}
