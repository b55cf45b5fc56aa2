package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// testApp is a real brain (config file, SQLite file, HTTP server on a free
// port) talking through the real Anthropic SDK to the fake model server.
type testApp struct {
	t    testing.TB
	app  *App
	fake *fakemodel.Server
	base string
	key  string
	logs *syncBuffer
}

// syncBuffer collects log output from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// writeConfig writes a config whose default model is the fake server, plus
// extra top-level YAML.
func writeConfig(t testing.TB, dir, modelURL, extra string) string {
	t.Helper()
	return writeConfigFor(t, dir, "anthropic", modelURL, extra)
}

// writeConfigFor is writeConfig with the model's provider.
func writeConfigFor(t testing.TB, dir, provider, modelURL, extra string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
models:
  default:
    provider: `+provider+`
    model: claude-test
    base_url: %s
    api_key: ${TEST_MODEL_KEY:-test-model-key}
    max_retries: 0
agents:
  - name: default
    instructions: You are a test agent.
%s`, filepath.Join(dir, "data"), modelURL, extra)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newTestApp(t testing.TB, extra string, opts Options) *testApp {
	t.Helper()
	return newTestAppFor(t, "anthropic", extra, opts)
}

// newTestAppFor is newTestApp with the model's provider (anthropic or
// openai, both served by the fake model server).
func newTestAppFor(t testing.TB, provider, extra string, opts Options) *testApp {
	t.Helper()
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	modelURL := fake.URL()
	if provider == "openai" {
		modelURL = fake.OpenAIBaseURL()
	}
	return startTestApp(t, fake, writeConfigFor(t, t.TempDir(), provider, modelURL, extra), opts)
}

// startTestApp starts brain on the config file at path, whose models talk
// to fake.
func startTestApp(t testing.TB, fake *fakemodel.Server, path string, opts Options) *testApp {
	t.Helper()
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{t: t, fake: fake, logs: &syncBuffer{}}
	if len(cfg.APIKeys) > 0 {
		ta.key = cfg.APIKeys[0].Key
	}
	if opts.Stderr == nil {
		opts.Stderr = ta.logs
	}
	cfg.Log.Level = "debug"
	app, err := New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ta.app = app
	ta.base = "http://" + app.Addr()
	t.Cleanup(func() {
		fake.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return ta
}

// do sends a request and returns the status, headers and body.
func (ta *testApp) do(method, path string, body any, hdr ...string) (int, http.Header, []byte) {
	ta.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			ta.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ta.base+path, r)
	if err != nil {
		ta.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if ta.key != "" {
		req.Header.Set("Authorization", "Bearer "+ta.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ta.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		ta.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// must sends a request that must answer want, and decodes the body into out.
func (ta *testApp) must(want int, method, path string, body, out any) {
	ta.t.Helper()
	status, _, data := ta.do(method, path, body)
	if status != want {
		ta.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			ta.t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

func (ta *testApp) createSession() engine.Session {
	ta.t.Helper()
	var s engine.Session
	ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{}, &s)
	return s
}

// waitStatus polls the API until the session has one of the statuses and
// no queued input. The deadline only turns a hang into a failure.
func (ta *testApp) waitStatus(id string, want ...engine.Status) engine.Session {
	ta.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var s engine.Session
		ta.must(http.StatusOK, "GET", "/v1/sessions/"+id, nil, &s)
		for _, w := range want {
			if s.Status == w {
				return s
			}
		}
		if time.Now().After(deadline) {
			ta.t.Fatalf("session %s is %s, want %v", id, s.Status, want)
		}
		select {
		case <-ta.app.Engine().Changed(id):
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (ta *testApp) events(id string) []engine.Event {
	ta.t.Helper()
	var page struct{ Events []engine.Event }
	ta.must(http.StatusOK, "GET", "/v1/sessions/"+id+"/events", nil, &page)
	return page.Events
}

// payload decodes ev, which must carry a T.
func payload[T engine.Payload](t *testing.T, ev engine.Event) T {
	t.Helper()
	p, err := ev.Decode()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := p.(T)
	if !ok {
		t.Fatalf("event %d %s carries %T, want %T", ev.Seq, ev.Type, p, v)
	}
	return v
}

func countType(evs []engine.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}
