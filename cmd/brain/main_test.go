package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brain/bot"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store/postgres/pgtest"
)

// TestMain lets the test binary run as brain itself, so the end-to-end tests
// start, kill and restart a real `brain serve` process without a build step.
func TestMain(m *testing.M) {
	// Inside a sandbox the binary runs as its helper (no environment).
	if os.Getenv("BRAIN_TEST_RUN_MAIN") == "1" || len(os.Args) > 1 && os.Args[1] == bot.SandboxHelperCommand {
		main()
		os.Exit(0)
	}
	pgtest.Main(m) // for brain migrate --to postgres
}

func TestRun_HelpOnEveryCommand(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"serve", "--help"}, {"chat", "--help"}, {"sessions", "--help"},
		{"sessions", "list", "--help"}, {"sessions", "show", "--help"},
		{"sessions", "send", "--help"}, {"approvals", "--help"}, {"approvals", "list", "--help"},
		{"config", "--help"}, {"config", "check", "--help"}, {"completion", "--help"},
		{"migrate", "--help"}, {"audit", "--help"}, {"audit", "export", "--help"}, {"audit", "verify", "--help"},
		{"people", "--help"}, {"people", "erase", "--help"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
		if err != nil && exitCode(err) != 0 {
			t.Errorf("%v: %v", args, err)
		}
		if !strings.Contains(out.String()+errOut.String(), "Usage") {
			t.Errorf("%v printed no usage: %q %q", args, out.String(), errOut.String())
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, nil, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "brain ") {
		t.Fatalf("version: %v %q", err, out.String())
	}
	if err := run(context.Background(), []string{"bogus"}, nil, io.Discard, io.Discard); err == nil {
		t.Fatal("unknown command accepted")
	}
}

// daemon is a `brain serve` child process.
type daemon struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	logs *bytes.Buffer
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func writeServeConfig(t *testing.T, dir, addr, modelURL string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: %s
data_dir: %s
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
`, addr, filepath.Join(dir, "data"), modelURL)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startDaemon(t *testing.T, config, addr string, extra ...string) *daemon {
	t.Helper()
	d := &daemon{t: t, base: "http://" + addr, logs: &bytes.Buffer{}}
	d.cmd = exec.Command(os.Args[0], append([]string{"serve", "--config", config}, extra...)...)
	d.cmd.Env = append(os.Environ(), "BRAIN_TEST_RUN_MAIN=1")
	d.cmd.Stderr = d.logs
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			_ = d.cmd.Process.Kill()
			_ = d.cmd.Wait()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not become healthy: %v\n%s", err, d.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *daemon) post(path string, body any, out any) int {
	d.t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(d.base+path, "application/json", bytes.NewReader(data))
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			d.t.Fatalf("POST %s: %s", path, raw)
		}
	}
	return resp.StatusCode
}

func (d *daemon) get(path string, out any) {
	d.t.Helper()
	resp, err := http.Get(d.base + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		d.t.Fatal(err)
	}
}

// apiEvent is an event as GET /v1/sessions/{id}/events lists it.
type apiEvent = engine.Event

// sessionError decodes a session.error event.
func sessionError(t *testing.T, ev apiEvent) engine.SessionError {
	t.Helper()
	p, err := ev.Decode()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := p.(engine.SessionError)
	if !ok {
		t.Fatalf("event %d %s carries %T", ev.Seq, ev.Type, p)
	}
	return e
}

type apiSession struct {
	ID     string    `json:"id"`
	Status string    `json:"status"`
	Event  *apiEvent `json:"event"`
}

func (d *daemon) waitStatus(id, want string) apiSession {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var s apiSession
		d.get("/v1/sessions/"+id, &s)
		if s.Status == want {
			return s
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("session %s is %s, want %s\n%s", id, s.Status, want, d.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *daemon) events(id string) []apiEvent {
	d.t.Helper()
	var page struct{ Events []apiEvent }
	d.get("/v1/sessions/"+id+"/events", &page)
	return page.Events
}

func TestServe_SIGKILLMidTurnLosesNoAcknowledgedInput(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	fake.Push(fakemodel.Hold())
	dir := t.TempDir()
	addr := freeAddr(t)
	config := writeServeConfig(t, dir, addr, fake.URL())

	d := startDaemon(t, config, addr)
	var s apiSession
	if st := d.post("/v1/sessions", map[string]any{"message": "deploy the thing"}, &s); st != 201 {
		t.Fatalf("create: %d", st)
	}
	if _, err := fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	var queued apiEvent
	if st := d.post("/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "and then this"}, &queued); st != 202 {
		t.Fatalf("queued input: %d", st)
	}
	// Kill without any chance to clean up.
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	fake.Release()

	d = startDaemon(t, config, addr)
	d.waitStatus(s.ID, "interrupted")
	evs := d.events(s.ID)
	acked := map[string]bool{s.Event.ID: false, queued.ID: false}
	var errorsFor []string
	for _, ev := range evs {
		if ev.Type == "user.message" {
			if _, ok := acked[ev.ID]; ok {
				acked[ev.ID] = true
			}
		}
		if ev.Type == "session.error" {
			errorsFor = append(errorsFor, sessionError(t, ev).InputID)
		}
	}
	for id, found := range acked {
		if !found {
			t.Errorf("acknowledged input %s is missing after the crash", id)
		}
	}
	if len(errorsFor) != 2 || errorsFor[0] != s.Event.ID || errorsFor[1] != queued.ID {
		t.Errorf("session.error input ids %v, want [%s %s]", errorsFor, s.Event.ID, queued.ID)
	}

	var resumed apiSession
	if st := d.post("/v1/sessions/"+s.ID+"/resume", nil, &resumed); st != 200 || resumed.Status != "idle" {
		t.Fatalf("resume: %d %s", st, resumed.Status)
	}
	if st := d.post("/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "status?"}, nil); st != 202 {
		t.Fatalf("input after resume: %d", st)
	}
	deadline := time.Now().Add(30 * time.Second)
	for countTypes(d.events(s.ID), "turn.completed") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no second turn\n%s", d.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.waitStatus(s.ID, "idle")

	// A graceful stop exits 0.
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("graceful stop: %v\n%s", err, d.logs)
	}
}

func TestServe_ShutdownInterruptsTurnsPastGrace(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	fake.Push(fakemodel.Hold())
	dir := t.TempDir()
	addr := freeAddr(t)
	config := writeServeConfig(t, dir, addr, fake.URL())

	d := startDaemon(t, config, addr, "--grace", "200ms")
	var s apiSession
	d.post("/v1/sessions", map[string]any{"message": "slow"}, &s)
	if _, err := fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, d.logs)
	}
	d = startDaemon(t, config, addr)
	d.waitStatus(s.ID, "interrupted")
	var code string
	for _, ev := range d.events(s.ID) {
		if ev.Type == "session.error" {
			code = sessionError(t, ev).Code
		}
	}
	if code != "interrupted" {
		t.Fatalf("session.error code %q", code)
	}
}

func countTypes(evs []apiEvent, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}
