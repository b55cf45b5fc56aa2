package slackbridge

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/internal/startstop/startstoptest"
	"brain/store/sqlite"
	"brain/webhooks/slackhook"
)

const signingSecret = "slack-signing-secret-for-tests"

// rig is a Slack bridge over a real SQLite store and an unstarted engine,
// talking to the fake Slack Web API (test double).
type rig struct {
	store *sqlite.Store
	fake  *slackfake.Server
	cfg   *config.SlackConfig
	eng   *engine.Engine
}

func newRig(t *testing.T) *rig {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(engine.Config{Store: st, Clock: time.Now, NewID: func(p string) string { return p + "_1" }})
	if err != nil {
		t.Fatal(err)
	}
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	cfg := &config.SlackConfig{BotToken: "xoxb-test", SigningSecret: signingSecret, APIURL: fake.URL() + "/api", Agent: "default"}
	return &rig{store: st, fake: fake, cfg: cfg, eng: eng}
}

func (r *rig) bridge() *Bridge {
	return New(r.cfg, Settings{}, r.eng, r.store, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// syncBuffer is a log sink safe for the bridge's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// postEvent posts a signed Events API mention to the bridge's handler.
func postEvent(t *testing.T, h http.Handler, eventID, ts string) int {
	t.Helper()
	body := []byte(`{"type":"event_callback","team_id":"T0FAKE","event_id":"` + eventID + `","event":{"type":"app_mention","user":"U1","text":"<@U0BRAIN> hi","ts":"` + ts + `","channel":"C1"}}`)
	now := strconv.FormatInt(time.Now().Unix(), 10)
	req := httptest.NewRequest("POST", "/slack/events", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slackhook.HeaderTimestamp, now)
	req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, now, body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestBridge_RecordsWhileStarted: a signed mention is recorded once the
// bridge runs and worked (here it fails: the engine has no agent); after
// Stop the endpoint refuses (500, so Slack retries) and a later Start does
// not start it again.
func TestBridge_RecordsWhileStarted(t *testing.T) {
	r := newRig(t)
	var logs syncBuffer
	b := New(r.cfg, Settings{}, r.eng, r.store, time.Now, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if code := postEvent(t, b.HTTP(), "Ev1", "1700000000.000100"); code != http.StatusOK {
		t.Fatalf("event while started: %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `msg="inbound event failed" platform=slack thread_key=slack:T0FAKE:C1:1700000000.000100`) {
		if time.Now().After(deadline) {
			t.Fatalf("the mention was not worked; logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if code := postEvent(t, b.HTTP(), "Ev2", "1700000000.000200"); code != http.StatusInternalServerError {
		t.Fatalf("event after Stop: %d, want 500", code)
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestBridge_StopBeforeStart: Stop is safe before Start and twice.
func TestBridge_StopBeforeStart(t *testing.T) {
	b := newRig(t).bridge()
	for range 2 {
		if err := b.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBridge_StartStopStress starts and stops bridges from 20 goroutines
// at once (run under -race).
func TestBridge_StartStopStress(t *testing.T) {
	r := newRig(t)
	for range 10 {
		b := r.bridge()
		startstoptest.Stress(t, b)
	}
}

// TestBridge_PostOutcome posts a run's outcome as a new message and marks
// its thread, keyed with the team auth.test reported, so a reply there
// starts a session that sees the outcome.
func TestBridge_PostOutcome(t *testing.T) {
	r := newRig(t)
	b := r.bridge()
	ctx := context.Background()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(ctx) })
	sc := config.ScheduleConfig{Name: "digest", PostTo: config.PostToConfig{SlackChannel: "C9"}}
	fire := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	if err := b.PostOutcome(ctx, sc, fire, "completed", "Nothing deployed."); err != nil {
		t.Fatal(err)
	}
	ms := r.fake.Messages("C9")
	if len(ms) != 1 || !strings.Contains(ms[0].Text, "Nothing deployed.") || !strings.Contains(ms[0].Text, "Mon 1 Jun 2026 09:00 UTC") {
		t.Fatalf("posted %+v", ms)
	}
	note, ok, err := r.store.ThreadContext(ctx, "slack:"+slackfake.TeamID+":C9:"+ms[0].TS)
	if err != nil || !ok || !strings.Contains(note, `scheduled run "digest"`) || !strings.Contains(note, "Nothing deployed.") {
		t.Fatalf("thread note %q, %v, %v", note, ok, err)
	}
	// A schedule named to mention or link is quoted inert (issue 24, 8).
	hostile := config.ScheduleConfig{Name: "<!channel> [click](https://evil.example) <@U123ABC>", PostTo: config.PostToConfig{SlackChannel: "C8"}}
	if err := b.PostOutcome(ctx, hostile, fire, "completed", "ok"); err != nil {
		t.Fatal(err)
	}
	if ms := r.fake.Messages("C8"); len(ms) != 1 || len(slackfake.LiveSequences(ms[0])) != 0 || !strings.Contains(ms[0].Text, "&lt;!channel&gt;") {
		t.Fatalf("posted %+v", ms)
	}
	// No channel: nothing to post.
	if err := b.PostOutcome(ctx, config.ScheduleConfig{Name: "quiet"}, fire, "completed", "x"); err != nil {
		t.Fatal(err)
	}
	if len(r.fake.Messages("C9")) != 1 {
		t.Fatal("posted without a channel")
	}
}

func TestMentions(t *testing.T) {
	for in, want := range map[string]string{
		"U0123ABC may not decide this approval; only U0456DEF, who started": "<@U0123ABC> may not decide this approval; only <@U0456DEF>, who started",
		"only (W0123ABC) may":   "only (<@W0123ABC>) may",
		"USERS and ABCU0123ABC": "USERS and ABCU0123ABC",
		"already <@U0123ABC>":   "already <@U0123ABC>",
	} {
		if got := mentions(in); got != want {
			t.Errorf("mentions(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRefusal_Escaped: an engine refusal quoting a person's or the model's
// words (a policy or tool name) reaches the clicker's ephemeral notice
// escaped; only the user ids brain turns into mentions are live.
func TestRefusal_Escaped(t *testing.T) {
	err := &engine.Error{Code: engine.CodeForbidden, Message: "policy <!channel> [x](https://evil.example) <https://evil.example|click> blocks U0BOSS1"}
	text, refused := refusal(err)
	if !refused {
		t.Fatal("not refused")
	}
	live := slackfake.LiveSequences(slackfake.Message{Text: text})
	if len(live) != 1 || live[0] != "<@U0BOSS1>" || !strings.Contains(text, "&lt;!channel&gt;") {
		t.Fatalf("notice %q: live %q", text, live)
	}
}
