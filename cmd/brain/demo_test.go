package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brain/engine/model/fakemodel"
)

// demoConfig is config.demo.yaml as shipped, with only its addresses and
// data_dir moved: brain on addr, the fake model server on fakeAddr.
func demoConfig(t *testing.T, addr, fakeAddr string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config.demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.NewReplacer(
		"127.0.0.1:8080", addr,
		"127.0.0.1:8081", fakeAddr,
		"./data-demo", filepath.Join(dir, "data"),
	).Replace(string(raw))
	path := filepath.Join(dir, "config.demo.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDemo_ChatBesideServeAsTheREADMESays runs the README's demo as
// written: `brain serve` on config.demo.yaml, then `brain chat` with the
// same config in a second process, which finds the data directory taken
// and talks to the daemon through its API. It types the README's three
// inputs and checks what the README says appears.
func TestDemo_ChatBesideServeAsTheREADMESays(t *testing.T) {
	addr, fakeAddr := freeAddr(t), freeAddr(t)
	config := demoConfig(t, addr, fakeAddr)
	d := startDaemon(t, config, addr)
	resp, err := http.Get(d.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz %d\n%s", resp.StatusCode, d.logs)
	}

	cmd, stdin, out := startChat(t, "--config", config)
	typeLine := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	out.waitFor(t, "chatting through its API", 1)
	out.waitFor(t, "\n> ", 1)

	// ask me: the question's options show as numbers; type one.
	typeLine("ask me")
	out.waitFor(t, "  3) Blue", 1)
	out.waitFor(t, "\n> ", 2)
	typeLine("3")
	out.waitFor(t, "blue", 1)
	out.waitFor(t, "\n> ", 3)

	// make a ticket: the approval card asks y/n; approved, the ticket lands.
	typeLine("make a ticket")
	out.waitFor(t, `Approve "Create ticket Demo ticket"`, 1)
	typeLine("y")
	out.waitFor(t, `applied: {"id":"DEMO-1","title":"Demo ticket"`, 1)
	out.waitFor(t, "\n> ", 4)
	var list struct{ Tickets []fakemodel.DemoTicket }
	(&daemon{t: t, base: "http://" + fakeAddr}).get(fakemodel.DemoTicketsPath, &list)
	if len(list.Tickets) != 1 || list.Tickets[0].Title != "Demo ticket" {
		t.Fatalf("tickets on the demo endpoint: %+v", list.Tickets)
	}

	// use a tool: a plain tool call and a summary of its result.
	typeLine("use a tool")
	out.waitFor(t, "lookup answered", 1)
	out.waitFor(t, "\n> ", 5)

	// Ctrl-C at the prompt leaves, with exit status 0.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat exited with %v:\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("chat did not exit on Ctrl-C at the prompt:\n%s", out.String())
	}
}

// startChat starts `brain chat` with args, its input a pipe.
func startChat(t *testing.T, args ...string) (*exec.Cmd, io.Writer, *ptyOutput) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"chat"}, args...)...)
	cmd.Env = append(os.Environ(), "BRAIN_TEST_RUN_MAIN=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &ptyOutput{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, stdin, out
}

// TestChat_ThroughTheAPICancelsAndContinues: beside `brain serve`, Ctrl-C
// during a turn cancels it through the API and the chat goes on; a second
// chat with --session continues the same session.
func TestChat_ThroughTheAPICancelsAndContinues(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	release := make(chan struct{})
	defer close(release)
	fake.Push(fakemodel.Block(release), fakemodel.Text("Fresh answer."), fakemodel.Text("Still here."))
	addr := freeAddr(t)
	config := writeServeConfig(t, t.TempDir(), addr, fake.URL())
	startDaemon(t, config, addr)

	cmd, stdin, out := startChat(t, "--config", config)
	out.waitFor(t, "chatting through its API", 1)
	out.waitFor(t, "\n> ", 1)
	io.WriteString(stdin, "think hard\n")
	if _, err := fake.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "^C: stopping the turn", 1)
	out.waitFor(t, "\n> ", 2)
	io.WriteString(stdin, "still there?\n")
	out.waitFor(t, "Fresh answer.", 1)
	out.waitFor(t, "\n> ", 3)
	_, id, ok := strings.Cut(out.String(), "(session ")
	if !ok {
		t.Fatalf("no session id:\n%s", out)
	}
	id, _, _ = strings.Cut(id, ")")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chat exited with %v:\n%s", err, out)
	}

	cmd, stdin, out = startChat(t, "--config", config, "--session", id)
	out.waitFor(t, "continuing session "+id, 1)
	io.WriteString(stdin, "and now?\n")
	out.waitFor(t, "Still here.", 1)
	stdin.(io.Closer).Close() // EOF ends the chat
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chat exited with %v:\n%s", err, out)
	}
}
