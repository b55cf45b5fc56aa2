package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"brain/bot/api"
	"brain/engine"
)

func readiness(t *testing.T, s *server) (int, api.Readiness) {
	t.Helper()
	return readinessAt(t, s, "/readyz")
}

func readinessAt(t *testing.T, s *server, path string) (int, api.Readiness) {
	t.Helper()
	w := s.doFrom("192.0.2.7:5000", "GET", path, "") // probes carry no key
	var r api.Readiness
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatalf("readyz body %q: %v", w.Body, err)
	}
	return w.Code, r
}

func TestServer_ReadyzNamesEachFailingCheckAndRecovers(t *testing.T) {
	s := newServer(t, &fakeEngine{}, &fakeSchedules{})
	var slackDown, dbDown atomic.Bool
	s.api.AddReadinessCheck(api.ReadinessCheck{Name: "database", Check: func(ctx context.Context) error {
		if dbDown.Load() {
			return errors.New("database is not writable: disk full")
		}
		return nil
	}})
	s.api.AddReadinessCheck(api.ReadinessCheck{Name: "slack", Check: func(ctx context.Context) error {
		if slackDown.Load() {
			return errors.New("slack auth.test: invalid_auth")
		}
		return nil
	}})

	code, r := readiness(t, s)
	if code != http.StatusOK || r.Status != "ready" || len(r.Checks) != 2 || !r.Checks[0].OK || !r.Checks[1].OK {
		t.Fatalf("all up: %d %+v", code, r)
	}

	slackDown.Store(true)
	dbDown.Store(true)
	code, r = readiness(t, s)
	if code != http.StatusServiceUnavailable || r.Status != "not_ready" {
		t.Fatalf("both down: %d %+v", code, r)
	}
	want := []api.CheckResult{
		{Name: "database", Error: "database is not writable: disk full"},
		{Name: "slack", Error: "slack auth.test: invalid_auth"},
	}
	for i, c := range want {
		if r.Checks[i] != c {
			t.Errorf("check %d = %+v, want %+v", i, r.Checks[i], c)
		}
	}

	dbDown.Store(false)
	code, r = readiness(t, s)
	if code != http.StatusServiceUnavailable || !r.Checks[0].OK || r.Checks[1].OK {
		t.Fatalf("slack still down: %d %+v", code, r)
	}
	slackDown.Store(false)
	if code, r = readiness(t, s); code != http.StatusOK || r.Status != "ready" {
		t.Fatalf("recovered: %d %+v", code, r)
	}
}

func TestServer_LivezAndHealthzStayUpWhenNotReady(t *testing.T) {
	s := newServer(t, &fakeEngine{}, &fakeSchedules{})
	s.api.AddReadinessCheck(api.ReadinessCheck{Name: "database", Check: func(ctx context.Context) error {
		return errors.New("database is not writable: disk full")
	}})
	for _, path := range []string{"/livez", "/healthz"} {
		if w := s.doFrom("192.0.2.7:5000", "GET", path, ""); w.Code != http.StatusOK {
			t.Errorf("%s = %d %s", path, w.Code, w.Body)
		}
	}
	if code, _ := readiness(t, s); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz = %d", code)
	}
}

func TestServer_ReadyzIntegrationsAreReportedNeverGating(t *testing.T) {
	s := newServer(t, &fakeEngine{StatsFunc: func() engine.Stats { return engine.Stats{} }}, &fakeSchedules{})
	var asked atomic.Int32
	s.api.AddReadinessCheck(api.ReadinessCheck{Name: "database", Check: func(ctx context.Context) error { return nil }})
	s.api.AddReadinessCheck(api.ReadinessCheck{Name: "linear", Integration: true, Check: func(ctx context.Context) error {
		asked.Add(1)
		return errors.New("no Linear workspace installed the app")
	}})
	code, r := readiness(t, s)
	if code != http.StatusOK || r.Status != "ready" || len(r.Checks) != 1 || r.Checks[0].Name != "database" || asked.Load() != 0 {
		t.Fatalf("plain probe: %d %+v (linear asked %d times)", code, r, asked.Load())
	}
	code, r = readinessAt(t, s, "/readyz?verbose")
	want := api.CheckResult{Name: "linear", Error: "no Linear workspace installed the app", Integration: true}
	if code != http.StatusOK || r.Status != "ready" || len(r.Checks) != 2 || r.Checks[1] != want {
		t.Fatalf("verbose probe: %d %+v", code, r)
	}
	if body := s.do("GET", "/metrics", "").Body.String(); !strings.Contains(body, `brain_integration_up{name="linear"} 0`+"\n") {
		t.Fatalf("metrics lack the integration:\n%s", body)
	}
}

func TestServer_ReadyzNotReadyWhileShuttingDown(t *testing.T) {
	done := make(chan struct{})
	srv := api.New(api.Config{Engine: &fakeEngine{}, Schedules: &fakeSchedules{}, Done: done})
	s := &server{t: t, api: srv, h: srv.Handler()}
	if code, _ := readiness(t, s); code != http.StatusOK {
		t.Fatalf("before shutdown: %d", code)
	}
	close(done)
	code, r := readiness(t, s)
	if code != http.StatusServiceUnavailable || len(r.Checks) != 1 || r.Checks[0].Name != "shutdown" {
		t.Fatalf("during shutdown: %d %+v", code, r)
	}
}

func TestServer_MetricsPutStatusesInLabels(t *testing.T) {
	eng := &fakeEngine{StatsFunc: func() engine.Stats {
		return engine.Stats{RunningTurns: 1, QueuedTurns: 4, Counters: map[string]int64{
			"turns": 3, "turns_failed": 1, "turns_interrupted": 2, "approvals_approved": 5, "approvals_expired": 1, "inputs": 9,
		}}
	}}
	s := newServer(t, eng, &fakeSchedules{})
	s.do("GET", "/v1/nothing", "")
	w := s.do("GET", "/metrics", "")
	body := w.Body.String()
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	for _, want := range []string{
		"# HELP brain_turns_running Turns running now.\n# TYPE brain_turns_running gauge\nbrain_turns_running 1\n",
		"brain_turns_queued 4\n",
		"# TYPE brain_turns_started_total counter\nbrain_turns_started_total 3\n",
		`brain_sessions_stopped_total{status="failed"} 1`,
		`brain_sessions_stopped_total{status="interrupted"} 2`,
		`brain_approvals_total{status="approved"} 5`,
		`brain_approvals_total{status="expired"} 1`,
		"brain_inputs_total 9\n",
		`brain_http_requests_total{code="404"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		if !strings.Contains(body, "# HELP "+name+" ") {
			t.Errorf("%s has no # HELP", name)
		}
		for _, status := range []string{"approved", "expired", "failed", "interrupted", "404"} {
			if strings.Contains(name, status) {
				t.Errorf("metric name %s embeds a status", name)
			}
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

func TestServer_SessionStatusFilterIsValidated(t *testing.T) {
	var got engine.SessionFilter
	eng := &sessionsEngine{fakeEngine: &fakeEngine{}, SessionsFunc: func(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error) {
		got = f
		return nil, nil
	}}
	srv := api.New(api.Config{Engine: eng, Schedules: &fakeSchedules{}})
	s := &server{t: t, api: srv, h: srv.Handler()}
	if w := s.do("GET", "/v1/sessions?status=idle,%20failed", ""); w.Code != http.StatusOK || len(got.Statuses) != 2 || got.Statuses[1] != engine.StatusFailed {
		t.Fatalf("valid statuses: %d %s %+v", w.Code, w.Body, got)
	}
	w := s.do("GET", "/v1/sessions?status=idle,done", "")
	if w.Code != http.StatusBadRequest {
		t.Fatalf("invalid status: %d %s", w.Code, w.Body)
	}
	if env := envelope(t, w); env.Error.Code != "invalid_request" || !strings.Contains(env.Error.Message, `"done" is not a session status`) {
		t.Fatalf("envelope %+v", env)
	}
}

// sessionsEngine adds Sessions to fakeEngine.
type sessionsEngine struct {
	*fakeEngine
	SessionsFunc func(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error)
}

func (e *sessionsEngine) Sessions(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error) {
	return e.SessionsFunc(ctx, f)
}

func TestServer_TypeErrorsNameNoGoType(t *testing.T) {
	s := newServer(t, &fakeEngine{}, &fakeSchedules{})
	for body, want := range map[string]string{
		`{"type":"user.message","text":"hi","answer":"yes"}`: `field "answer" must be an object`,
		`{"type":"user.message","text":7}`:                   `field "text" must be a string`,
	} {
		w := s.do("POST", "/v1/sessions/ses_1/events", body)
		env := envelope(t, w)
		if w.Code != http.StatusBadRequest || env.Error.Message != want {
			t.Errorf("%s: %d %q, want %q", body, w.Code, env.Error.Message, want)
		}
	}
	w := s.do("POST", "/v1/sessions", `{"interactive":"yes"}`)
	if env := envelope(t, w); env.Error.Message != `field "interactive" must be true or false` {
		t.Errorf("interactive: %q", env.Error.Message)
	}
}
