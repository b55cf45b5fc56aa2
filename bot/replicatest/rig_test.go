package replicatest

import (
	"bufio"
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/store/postgres/pgtest"
	"brain/webhooks/slackhook"
)

// One throwaway PostgreSQL cluster for the package.
func TestMain(m *testing.M) { pgtest.Main(m) }

const signingSecret = "replicas-signing-secret"

// buildBrain builds cmd/brain into dir: the replicas are the real binary.
func buildBrain(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "brain")
	cmd := exec.Command("go", "build", "-o", bin, "brain/cmd/brain")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer is a log buffer the process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// replica is one `brain serve` process.
type replica struct {
	t    *testing.T
	name string
	base string
	cmd  *exec.Cmd
	logs *syncBuffer
	http *http.Client
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

// rigConfig is what the replicas' config points at; appToken set means
// Slack in Socket Mode.
type rigConfig struct {
	dsn, modelURL, toolURL, slackURL, appToken string
}

func writeConfig(t *testing.T, dir, addr string, rc rigConfig) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: %s
data_dir: %s
log: {level: info}
storage: {driver: postgres, dsn: %q, lease_ttl: 1s, poll_interval: 100ms}
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
    tools: [deploy]
tools:
  http:
    - name: deploy
      description: Deploy a service
      input: {type: object, properties: {service: {type: string}}, required: [service]}
      url: %s/deploy
      approval: {title: "Deploy {{.service}}"}
slack:
  bot_token: xoxb-replicas
  signing_secret: %s
  api_url: %s/api/
  app_token: %q
schedules:
  - {name: tick, cron: "@every 1s", prompt: "scheduled tick"}
approvals: {ttl: 1h}
`, addr, filepath.Join(dir, "data"), rc.dsn, rc.modelURL, rc.toolURL, signingSecret, rc.slackURL, rc.appToken)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startReplica(t *testing.T, bin, name string, rc rigConfig) *replica {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	r := &replica{t: t, name: name, base: "http://" + addr, logs: &syncBuffer{}, http: &http.Client{Timeout: time.Minute}}
	r.cmd = exec.Command(bin, "serve", "--config", writeConfig(t, dir, addr, rc))
	r.cmd.Stderr = r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = r.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = r.cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() || os.Getenv("BRAIN_REPLICAS_LOGS") != "" {
			t.Logf("replica %s log:\n%s", r.name, r.logs)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(r.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s did not become healthy: %v\n%s", name, err, r.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill SIGKILLs the process: nothing of it runs after this returns.
func (r *replica) kill() {
	r.t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		r.t.Fatal(err)
	}
	_ = r.cmd.Wait()
}

// call sends a JSON request and decodes a 2xx answer into out; it returns
// the status, and transport errors instead of failing (senders run in
// goroutines).
func (r *replica) call(method, path string, body, out any, hdr ...string) (int, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode/100 == 2 && out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w: %s", method, path, err, raw)
		}
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, nil
}

// must is call for the test goroutine.
func (r *replica) must(method, path string, body, out any, hdr ...string) int {
	r.t.Helper()
	st, err := r.call(method, path, body, out, hdr...)
	if err != nil {
		r.t.Fatalf("replica %s: %v", r.name, err)
	}
	return st
}

type apiSession struct {
	ID     string        `json:"id"`
	Status string        `json:"status"`
	Event  *engine.Event `json:"event"`
}

// events reads a session's whole log.
func (r *replica) events(id string) []engine.Event {
	r.t.Helper()
	var out []engine.Event
	var after int64
	for {
		var page struct{ Events []engine.Event }
		r.must("GET", fmt.Sprintf("/v1/sessions/%s/events?after=%d&limit=1000", id, after), nil, &page)
		out = append(out, page.Events...)
		if len(page.Events) < 1000 {
			return out
		}
		after = page.Events[len(page.Events)-1].Seq
	}
}

// waitFor polls cond until it holds; the deadline only turns a hang into
// a failure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := waitUntil(what, cond); err != nil {
		t.Fatal(err)
	}
}

// waitUntil is waitFor for other goroutines than the test's.
func waitUntil(what string, cond func() bool) error {
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// slackEvent posts a signed Events API callback to the replica.
func (r *replica) slackEvent(eventID string, ev map[string]any) error {
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": eventID, "event_time": 1, "event": ev,
	})
	req, _ := http.NewRequest("POST", r.base+"/slack/events", bytes.NewReader(body))
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slackhook.HeaderTimestamp, ts)
	req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, ts, body))
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("slack event %s on %s: status %d", eventID, r.name, resp.StatusCode)
	}
	return nil
}

// stream follows a session's events over SSE and collects the ids of the
// events it receives until ctx ends.
type stream struct {
	mu   sync.Mutex
	ids  map[string]bool
	done chan struct{}
}

func (r *replica) follow(ctx context.Context, sessionID string) (*stream, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", r.base+"/v1/sessions/"+sessionID+"/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("follow: status %d", resp.StatusCode)
	}
	s := &stream{ids: map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var ev engine.Event
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &ev) == nil && ev.ID != "" {
				s.mu.Lock()
				s.ids[ev.ID] = true
				s.mu.Unlock()
			}
		}
	}()
	return s, nil
}

func (s *stream) saw(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[id]
}
