package linearbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"brain/bot/config"
	"brain/channels/linear/linearfake"
	"brain/engine"
	"brain/internal/startstop/startstoptest"
	"brain/store/sqlite"
	"brain/webhooks/linearhook"
)

const (
	webhookSecret = "linear-webhook-secret-for-tests"
	accessToken   = "lin_oauth_test_token"
)

// newBridge builds a Linear bridge over a real SQLite store and an
// unstarted engine, talking to the fake Linear GraphQL API (test double).
func newBridge(t *testing.T) *Bridge {
	t.Helper()
	b, _ := newBridgeAndFake(t)
	return b
}

func newBridgeAndFake(t *testing.T) (*Bridge, *linearfake.Server) {
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
	fake := linearfake.New(accessToken)
	t.Cleanup(fake.Close)
	cfg := &config.LinearConfig{WebhookSecret: webhookSecret, AccessToken: accessToken, APIURL: fake.URL(), Agent: "default"}
	return New(cfg, "", eng, st, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil))), fake
}

// postCreated posts a signed AgentSessionEvent created to the handler.
func postCreated(t *testing.T, h http.Handler, sid, delivery string) int {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"type": "AgentSessionEvent", "action": "created", "webhookTimestamp": time.Now().UnixMilli(),
		"promptContext": "<issue identifier=\"ENG-1\"><title>Fix checkout</title></issue>\nPlease look",
		"agentSession": map[string]any{
			"id": sid, "creatorId": "u-1", "creator": map[string]any{"id": "u-1", "name": "Ann"},
			"comment": map[string]any{"id": "c-1", "body": "Please look", "userId": "u-1"},
			"issue":   map[string]any{"id": "i-1", "identifier": "ENG-1", "title": "Fix checkout"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/linear/webhook", bytes.NewReader(raw))
	req.Header.Set(linearhook.HeaderSignature, linearhook.Signature(webhookSecret, raw))
	req.Header.Set(linearhook.HeaderDelivery, delivery)
	req.Header.Set(linearhook.HeaderEvent, "AgentSessionEvent")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestBridge_RecordsWhileStarted: a signed webhook is recorded once the
// bridge runs and worked (the agent session is acknowledged); after Stop the endpoint refuses (500, so Linear retries)
// and a later Start does not start it again.
func TestBridge_RecordsWhileStarted(t *testing.T) {
	b, fake := newBridgeAndFake(t)
	ctx := context.Background()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if code := postCreated(t, b.HTTP(), "s-1", "d0e1f2a3-0000-4000-8000-000000000001"); code != http.StatusOK {
		t.Fatalf("webhook while started: %d", code)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	acts, err := fake.WaitActivities(wctx, "s-1", 1)
	if err != nil || acts[0].Body != "Looking into it…" {
		t.Fatalf("activities %+v, %v: want the acknowledgement", acts, err)
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if code := postCreated(t, b.HTTP(), "s-2", "d0e1f2a3-0000-4000-8000-000000000002"); code != http.StatusInternalServerError {
		t.Fatalf("webhook after Stop: %d, want 500", code)
	}
}

// TestBridge_StopBeforeStart: Stop is safe before Start and twice.
func TestBridge_StopBeforeStart(t *testing.T) {
	b := newBridge(t)
	for range 2 {
		if err := b.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBridge_StartStopStress starts and stops bridges from 20 goroutines
// at once (run under -race).
func TestBridge_StartStopStress(t *testing.T) {
	for range 10 {
		b := newBridge(t)
		startstoptest.Stress(t, b)
	}
}
