package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"brain/bot/api"
	"brain/bot/config"
	"brain/engine"
)

func sessionEngine() *fakeEngine {
	return &fakeEngine{
		SessionFunc: func(ctx context.Context, id string) (engine.Session, error) { return engine.Session{ID: id}, nil },
		StatsFunc:   func() engine.Stats { return engine.Stats{} },
	}
}

func TestServer_WithoutKeysOnlyLocalCallers(t *testing.T) {
	s := newServer(t, sessionEngine(), &fakeSchedules{})
	cases := []struct {
		name, peer, path string
		hdr              []string
		status           int
	}{
		{"loopback", "127.0.0.1:5000", "/v1/sessions/ses_1", nil, 200},
		{"loopback v6", "[::1]:5000", "/v1/sessions/ses_1", nil, 200},
		{"loopback v4 in v6", "[::ffff:127.0.0.1]:5000", "/v1/sessions/ses_1", nil, 200},
		{"metrics on loopback", "127.0.0.1:5000", "/metrics", nil, 200},
		{"remote", "192.0.2.7:5000", "/v1/sessions/ses_1", nil, 403},
		{"remote metrics", "192.0.2.7:5000", "/metrics", nil, 403},
		{"private network", "10.0.0.2:5000", "/v1/sessions/ses_1", nil, 403},
		{"proxied X-Forwarded-For", "127.0.0.1:5000", "/v1/sessions/ses_1", []string{"X-Forwarded-For", "203.0.113.9"}, 403},
		{"proxied Forwarded", "127.0.0.1:5000", "/v1/sessions/ses_1", []string{"Forwarded", "for=203.0.113.9"}, 403},
		{"proxied X-Real-IP", "127.0.0.1:5000", "/metrics", []string{"x-real-ip", "203.0.113.9"}, 403},
		{"proxied, even empty", "127.0.0.1:5000", "/v1/sessions/ses_1", []string{"X-Forwarded-For", ""}, 403},
		{"healthz is open", "192.0.2.7:5000", "/healthz", []string{"X-Forwarded-For", "203.0.113.9"}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := s.doFrom(c.peer, "GET", c.path, "", c.hdr...)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			if c.status != 403 {
				return
			}
			if env := envelope(t, w); env.Error.Code != "forbidden" || !strings.Contains(env.Error.Message, "configure api_keys") {
				t.Fatalf("envelope %+v", env)
			}
		})
	}
}

func TestServer_KeysServeAnyPeer(t *testing.T) {
	s := newServer(t, sessionEngine(), &fakeSchedules{}, config.APIKey{Name: "ops", Key: "k1"})
	w := s.doFrom("192.0.2.7:5000", "GET", "/v1/sessions/ses_1", "", "Authorization", "Bearer k1", "X-Forwarded-For", "203.0.113.9")
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if w := s.doFrom("127.0.0.1:5000", "GET", "/v1/sessions/ses_1", ""); w.Code != 401 {
		t.Fatalf("loopback without a key: status %d, want 401", w.Code)
	}
}

func TestServer_DeciderIsTheKeysName(t *testing.T) {
	var got []engine.Decision
	record := func(ctx context.Context, id string, d engine.Decision) (engine.Approval, error) {
		got = append(got, d)
		return engine.Approval{ID: id, DecidedBy: d.By}, nil
	}
	eng := &fakeEngine{DecideFunc: record, RetryFunc: record}
	keyed := newServer(t, eng, &fakeSchedules{},
		config.APIKey{Name: "ops", Key: "k-ops"},
		config.APIKey{Name: "slackbot", Key: "k-bot", ActFor: true})
	open := newServer(t, eng, &fakeSchedules{})
	cases := []struct {
		name   string
		s      *server
		key    string
		path   string
		body   string
		status int
		by     string // recorded decider when status is 200
	}{
		{"by defaults to the key", keyed, "k-ops", "decision", `{"decision":"approve"}`, 200, "ops"},
		{"by names the key", keyed, "k-ops", "decision", `{"decision":"deny","by":"ops"}`, 200, "ops"},
		{"by names another", keyed, "k-ops", "decision", `{"decision":"approve","by":"U_ANN"}`, 403, ""},
		{"act_for names another", keyed, "k-bot", "decision", `{"decision":"approve","by":"U_ANN"}`, 200, "U_ANN"},
		{"act_for without by", keyed, "k-bot", "decision", `{"decision":"approve"}`, 200, "slackbot"},
		{"retry defaults to the key", keyed, "k-ops", "retry", `{}`, 200, "ops"},
		{"retry names another", keyed, "k-ops", "retry", `{"by":"U_ANN"}`, 403, ""},
		{"retry act_for", keyed, "k-bot", "retry", `{"by":"U_ANN"}`, 200, "U_ANN"},
		{"no keys: by as given", open, "", "decision", `{"decision":"approve","by":"U_ANN"}`, 200, "U_ANN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got = nil
			var hdr []string
			if c.key != "" {
				hdr = []string{"Authorization", "Bearer " + c.key}
			}
			w := c.s.do("POST", "/v1/approvals/apr_1/"+c.path, c.body, hdr...)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			if c.status != http.StatusOK {
				if env := envelope(t, w); env.Error.Code != "forbidden" || !strings.Contains(env.Error.Message, "act_for") {
					t.Fatalf("envelope %+v", env)
				}
				if len(got) != 0 {
					t.Fatalf("the engine was asked: %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].By != c.by || !got[0].ViaAPI {
				t.Fatalf("engine got %+v, want by %q via the API", got, c.by)
			}
			if c.key == "k-bot" && c.by == "U_ANN" && !strings.Contains(keyed.logs.String(), "api_key=slackbot by=U_ANN") {
				t.Errorf("acting for another is not logged with the key:\n%s", keyed.logs)
			}
		})
	}
}

// TestServer_WrongKeysAreThrottled replays finding 7 of issue 24: a short
// key was found by guessing, never throttled. Wrong keys from one address
// are now throttled with backoff (even a right key waits, so a guess
// learns nothing) and counted in metrics; other addresses are not held up.
func TestServer_WrongKeysAreThrottled(t *testing.T) {
	const key = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	srv := api.New(api.Config{
		Engine: sessionEngine(), Schedules: &fakeSchedules{}, Logger: slog.New(slog.DiscardHandler),
		APIKeys: []config.APIKey{{Name: "ops", Key: key}}, MaxBodyBytes: 256, DefaultAgent: "default",
		Clock: func() time.Time { return now },
	})
	s := &server{t: t, api: srv, h: srv.Handler()}
	const guesser, other = "198.51.100.7:5000", "198.51.100.8:5000"
	for i := range 6 {
		if w := s.doFrom(guesser, "GET", "/v1/sessions/ses_1", "", "Authorization", fmt.Sprintf("Bearer guess-%d", i)); w.Code != 401 {
			t.Fatalf("guess %d: status %d, want 401", i, w.Code)
		}
	}
	w := s.doFrom(guesser, "GET", "/v1/sessions/ses_1", "", "Authorization", "Bearer "+key)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" || envelope(t, w).Error.Code != "overloaded" {
		t.Fatalf("the right key from a throttled address: %d %q %s; want 429 with Retry-After: 1", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if w := s.doFrom(other, "GET", "/v1/sessions/ses_1", "", "Authorization", "Bearer "+key); w.Code != 200 {
		t.Fatalf("another address: status %d, want 200", w.Code)
	}
	now = now.Add(time.Second)
	if w := s.doFrom(guesser, "GET", "/v1/sessions/ses_1", "", "Authorization", "Bearer "+key); w.Code != 200 {
		t.Fatalf("after the wait: status %d, want 200", w.Code)
	}
	m := s.doFrom(other, "GET", "/metrics", "", "Authorization", "Bearer "+key).Body.String()
	for _, want := range []string{`brain_auth_failures_total{reason="invalid_key"} 6`, `brain_auth_failures_total{reason="throttled"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}
