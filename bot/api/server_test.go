package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"brain/bot/api"
	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
)

// fakeEngine is an api.Engine whose methods call the ...Func fields; a
// method a test did not set panics (the server answers 500).
type fakeEngine struct {
	api.Engine
	SessionFunc func(ctx context.Context, id string) (engine.Session, error)
	SendFunc    func(ctx context.Context, id string, in engine.Input) (engine.Event, bool, error)
	StatsFunc   func() engine.Stats
	DecideFunc  func(ctx context.Context, id string, d engine.Decision) (engine.Approval, error)
	RetryFunc   func(ctx context.Context, id string, d engine.Decision) (engine.Approval, error)

	SessionUsageFunc func(ctx context.Context, id string) (engine.Usage, error)
}

func (f *fakeEngine) Decide(ctx context.Context, id string, d engine.Decision) (engine.Approval, error) {
	return f.DecideFunc(ctx, id, d)
}

func (f *fakeEngine) Retry(ctx context.Context, id string, d engine.Decision) (engine.Approval, error) {
	return f.RetryFunc(ctx, id, d)
}

func (f *fakeEngine) Session(ctx context.Context, id string) (engine.Session, error) {
	return f.SessionFunc(ctx, id)
}

func (f *fakeEngine) Send(ctx context.Context, id string, in engine.Input) (engine.Event, bool, error) {
	return f.SendFunc(ctx, id, in)
}

func (f *fakeEngine) Stats() engine.Stats { return f.StatsFunc() }

// SessionUsage is zero unless the test sets SessionUsageFunc.
func (f *fakeEngine) SessionUsage(ctx context.Context, id string) (engine.Usage, error) {
	if f.SessionUsageFunc == nil {
		return engine.Usage{}, nil
	}
	return f.SessionUsageFunc(ctx, id)
}

// fakeSchedules is an api.Schedules with function fields.
type fakeSchedules struct {
	StatusFunc func(ctx context.Context) ([]schedule.Status, error)
	RunNowFunc func(ctx context.Context, name string) (schedule.Run, error)
}

var _ api.Schedules = (*fakeSchedules)(nil)

func (f *fakeSchedules) Status(ctx context.Context) ([]schedule.Status, error) {
	return f.StatusFunc(ctx)
}

func (f *fakeSchedules) RunNow(ctx context.Context, name string) (schedule.Run, error) {
	return f.RunNowFunc(ctx, name)
}

type server struct {
	t    *testing.T
	api  *api.Server
	h    http.Handler
	logs *bytes.Buffer
}

func newServer(t *testing.T, eng *fakeEngine, sched *fakeSchedules, keys ...config.APIKey) *server {
	t.Helper()
	logs := &bytes.Buffer{}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	s := api.New(api.Config{
		Engine: eng, Schedules: sched, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		APIKeys: keys, MaxBodyBytes: 256, DefaultAgent: "default", Done: done,
	})
	return &server{t: t, api: s, h: s.Handler(), logs: logs}
}

// localPeer is a caller on this host, the only one served without keys.
const localPeer = "127.0.0.1:40000"

// do sends a request from localPeer.
func (s *server) do(method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	return s.doFrom(localPeer, method, path, body, hdr...)
}

// doFrom sends a request from peer (host:port).
func (s *server) doFrom(peer, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rd)
	r.RemoteAddr = peer
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

func envelope(t *testing.T, w *httptest.ResponseRecorder) api.ErrorEnvelope {
	t.Helper()
	var env api.ErrorEnvelope
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("not an envelope: %s", w.Body)
	}
	if env.RequestID == "" || env.RequestID != w.Header().Get("X-Request-ID") {
		t.Fatalf("request id: header %q body %q", w.Header().Get("X-Request-ID"), env.RequestID)
	}
	return env
}

func TestServer_EngineErrorKeepsItsMessageThroughWraps(t *testing.T) {
	eng := &fakeEngine{SessionFunc: func(ctx context.Context, id string) (engine.Session, error) {
		return engine.Session{}, fmt.Errorf("load session %s: %w", id, engine.Errorf(engine.CodeNotFound, "no session %s", id))
	}}
	s := newServer(t, eng, &fakeSchedules{})
	w := s.do("GET", "/v1/sessions/ses_9", "")
	if w.Code != http.StatusNotFound {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if env := envelope(t, w); env.Error.Code != "not_found" || env.Error.Message != "no session ses_9" {
		t.Fatalf("envelope %+v", env)
	}
}

func TestServer_RoutesAuthAndBodies(t *testing.T) {
	var sent engine.Input
	eng := &fakeEngine{
		SendFunc: func(ctx context.Context, id string, in engine.Input) (engine.Event, bool, error) {
			sent = in
			return engine.Event{SessionID: id, Seq: 1, Type: engine.EventUserMessage}, false, nil
		},
		StatsFunc: func() engine.Stats { return engine.Stats{RunningTurns: 2} },
	}
	s := newServer(t, eng, &fakeSchedules{}, config.APIKey{Name: "ops", Key: "k1"})
	auth := []string{"Authorization", "Bearer k1"}
	cases := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"no key", "GET", "/v1/sessions/ses_1", "", nil, 401, "unauthorized"},
		{"metrics need a key", "GET", "/metrics", "", nil, 401, "unauthorized"},
		{"unknown route", "GET", "/v2/x", "", auth, 404, "not_found"},
		{"method", "DELETE", "/v1/sessions", "", auth, 405, "method_not_allowed"},
		{"too large", "POST", "/v1/sessions/ses_1/events", `{"type":"user.message","text":"` + strings.Repeat("x", 300) + `"}`, auth, 413, "too_large"},
		{"bad body", "POST", "/v1/sessions/ses_1/events", `{"type":"user.message"}`, auth, 400, "invalid_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := s.do(c.method, c.path, c.body, c.hdr...)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			if env := envelope(t, w); env.Error.Code != c.code || env.Error.Message == "" {
				t.Fatalf("envelope %+v, want code %s", env, c.code)
			}
			if c.status == 401 && w.Header().Get("WWW-Authenticate") != `Bearer realm="brain"` {
				t.Fatalf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
			}
		})
	}
	if w := s.do("GET", "/healthz", ""); w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"status":"ok"}` {
		t.Fatalf("healthz %d %s", w.Code, w.Body)
	}
	w := s.do("POST", "/v1/sessions/ses_1/events", `{"type":"user.message","text":"hi","author":"ann"}`, auth...)
	if w.Code != http.StatusAccepted || sent.Text != "hi" || sent.Author != "ann" {
		t.Fatalf("post event %d %s, sent %+v", w.Code, w.Body, sent)
	}
	w = s.do("GET", "/metrics", "", auth...)
	for _, want := range []string{"brain_turns_running 2\n", `brain_http_requests_total{code="401"} 2`, `brain_http_requests_total{code="202"} 1`, "# TYPE brain_http_requests_total counter\n"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, w.Body)
		}
	}
}

func TestServer_PanicIsAnInternalError(t *testing.T) {
	s := newServer(t, &fakeEngine{}, &fakeSchedules{}) // Session is not set: it panics
	w := s.do("GET", "/v1/sessions/ses_1", "")
	if w.Code != 500 {
		t.Fatalf("status %d", w.Code)
	}
	env := envelope(t, w)
	if env.Error.Code != "internal" || env.Error.Message != "internal error" {
		t.Fatalf("envelope %+v", env)
	}
	if !strings.Contains(s.logs.String(), "request failed") || !strings.Contains(s.logs.String(), "request_id="+env.RequestID) {
		t.Fatalf("log lacks the failure:\n%s", s.logs)
	}
}

func TestServer_Schedules(t *testing.T) {
	fire := time.Date(2026, 3, 30, 9, 0, 0, 0, time.UTC)
	sched := &fakeSchedules{
		StatusFunc: func(ctx context.Context) ([]schedule.Status, error) {
			return []schedule.Status{{Name: "digest", Cron: "0 9 * * *", Timezone: "UTC", Agent: "default",
				Enabled: true, Overlap: "skip", PostTo: &schedule.PostTo{SlackChannel: "C1"}, NextFire: &fire, LastRuns: []schedule.Run{}}}, nil
		},
		RunNowFunc: func(ctx context.Context, name string) (schedule.Run, error) {
			if name != "digest" {
				return schedule.Run{}, engine.Errorf(engine.CodeNotFound, "no schedule named %q", name)
			}
			return schedule.Run{Schedule: name, FireTime: fire, Trigger: "manual", Status: "running"}, nil
		},
	}
	s := newServer(t, &fakeEngine{}, sched)
	w := s.do("GET", "/v1/schedules", "")
	want := `{"schedules":[{"name":"digest","cron":"0 9 * * *","timezone":"UTC","agent":"default","enabled":true,"overlap":"skip",` +
		`"post_to":{"slack_channel":"C1"},"next_fire":"2026-03-30T09:00:00Z","last_runs":[]}]}`
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != want {
		t.Fatalf("list %d:\n%s\nwant\n%s", w.Code, w.Body, want)
	}
	if w := s.do("POST", "/v1/schedules/digest/run", ""); w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), `"trigger":"manual"`) {
		t.Fatalf("run now %d %s", w.Code, w.Body)
	}
	w = s.do("POST", "/v1/schedules/nope/run", "")
	if env := envelope(t, w); w.Code != 404 || env.Error.Message != `no schedule named "nope"` {
		t.Fatalf("run unknown %d %+v", w.Code, env)
	}
}
