package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"brain/engine/model/fakemodel"
)

// ptyOutput collects what the child writes to its terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (o *ptyOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until want appears n times in the terminal's output.
func (o *ptyOutput) waitFor(t *testing.T, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(o.String(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("terminal lacks %q (x%d):\n%s", want, n, o.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChat_CtrlCThroughATerminal drives a real `brain chat` process on a
// pseudo-terminal: Ctrl-C during a turn stops the turn and the chat stays;
// Ctrl-C at the prompt ends it with exit status 0.
func TestChat_CtrlCThroughATerminal(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	release := make(chan struct{})
	defer close(release)
	fake.Push(fakemodel.Block(release), fakemodel.Text("Fresh answer."))
	config := writeServeConfig(t, t.TempDir(), "127.0.0.1:0", fake.URL())

	cmd := exec.Command(os.Args[0], "chat", "--config", config)
	cmd.Env = append(os.Environ(), "BRAIN_TEST_RUN_MAIN=1")
	term, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer term.Close()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	out := &ptyOutput{}
	go func() { _, _ = io.Copy(out, term) }()

	out.waitFor(t, "\n> ", 1)
	if _, err := term.Write([]byte("think hard\r")); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := term.Write([]byte{0x03}); err != nil { // Ctrl-C: the tty sends SIGINT
		t.Fatal(err)
	}
	out.waitFor(t, "^C: stopping the turn", 1)
	out.waitFor(t, "\n> ", 2)
	if _, err := term.Write([]byte("still there?\r")); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "Fresh answer.", 1)
	out.waitFor(t, "\n> ", 3)
	if _, err := term.Write([]byte{0x03}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) || err != nil {
			t.Fatalf("chat exited with %v:\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("chat did not exit on Ctrl-C at the prompt:\n%s", out.String())
	}
}
