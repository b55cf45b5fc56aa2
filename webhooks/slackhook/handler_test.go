package slackhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testSecret = "test-signing-secret"

var testNow = time.Unix(1_700_000_000, 0)

func newTestHandler(t testing.TB, inbox Inbox) *Handler {
	t.Helper()
	return &Handler{
		SigningSecret: testSecret,
		Inbox:         inbox,
		BotUserID:     botID,
		Clock:         func() time.Time { return testNow },
		Logger:        testLogger(t),
	}
}

// testLogger logs at debug level into the test's output.
func testLogger(t testing.TB) *slog.Logger {
	t.Helper()
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// signedRequest builds a POST signed at ts with secret.
func signedRequest(t testing.TB, path string, body []byte, secret string, ts time.Time) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	stamp := strconv.FormatInt(ts.Unix(), 10)
	r.Header.Set(HeaderTimestamp, stamp)
	r.Header.Set(HeaderSignature, Signature(secret, stamp, body))
	if strings.HasSuffix(path, "/interactions") {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

func serve(t testing.TB, h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandler_SignedMention(t *testing.T) {
	tests := []struct {
		name, inner, wantThread string
	}{
		{"top level", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`, "slack:T1:C1:3.2"},
		{"in a thread", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","thread_ts":"3.0","channel":"C1"}`, "slack:T1:C1:3.0"},
		{"DM", `{"type":"message","channel_type":"im","user":"U1","text":"hi","ts":"3.2","channel":"D1"}`, "slack:T1:D1:3.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inbox, rec := newRecorder(t)
			w := serve(t, newTestHandler(t, inbox), signedRequest(t, "/slack/events", envelopeJSON(t, "Ev1", tt.inner), testSecret, testNow))
			if w.Code != http.StatusOK || w.Body.Len() != 0 {
				t.Fatalf("status %d body %q", w.Code, w.Body)
			}
			items := rec.Items()
			if len(items) != 1 {
				t.Fatalf("recorded %d items", len(items))
			}
			checkWellFormed(t, items[0])
			if items[0].ThreadKey != tt.wantThread {
				t.Fatalf("thread key %q, want %q", items[0].ThreadKey, tt.wantThread)
			}
			if got := items[0].DedupeKeys; len(got) != 2 || got[0] != "event:Ev1" || got[1] != "msg:"+items[0].Message().Channel+":3.2" {
				t.Fatalf("dedupe keys %v", got)
			}
		})
	}
}

// The app_mention and message copies of one mention, and a retry, record
// one Item; all three are acked.
func TestHandler_DuplicatesAcked(t *testing.T) {
	inbox, rec := newRecorder(t)
	h := newTestHandler(t, inbox)
	bodies := [][]byte{
		envelopeJSON(t, "EvA", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`),
		envelopeJSON(t, "EvM", `{"type":"message","channel_type":"channel","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`),
		envelopeJSON(t, "EvA", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`),
	}
	for i, body := range bodies {
		r := signedRequest(t, "/slack/events", body, testSecret, testNow)
		if i == 2 {
			r.Header.Set(HeaderRetryNum, "1")
			r.Header.Set(HeaderRetryReason, "http_timeout")
		}
		if w := serve(t, h, r); w.Code != http.StatusOK {
			t.Fatalf("delivery %d: status %d", i, w.Code)
		}
	}
	if n := len(rec.Items()); n != 1 {
		t.Fatalf("recorded %d items, want 1", n)
	}
}

// A retry may be the only copy that arrives: it must be recorded.
func TestHandler_RetryStillRecorded(t *testing.T) {
	inbox, rec := newRecorder(t)
	r := signedRequest(t, "/slack/events", envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`), testSecret, testNow)
	r.Header.Set(HeaderRetryNum, "2")
	r.Header.Set(HeaderRetryReason, "http_error")
	if w := serve(t, newTestHandler(t, inbox), r); w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	if n := len(rec.Items()); n != 1 {
		t.Fatalf("recorded %d items, want 1", n)
	}
}

func TestHandler_Rejected(t *testing.T) {
	body := envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`)
	tests := []struct {
		name string
		req  func(t *testing.T) *http.Request
		want int
	}{
		{"forged", func(t *testing.T) *http.Request {
			return signedRequest(t, "/slack/events", body, "other-secret", testNow)
		}, http.StatusUnauthorized},
		{"stale", func(t *testing.T) *http.Request {
			return signedRequest(t, "/slack/events", body, testSecret, testNow.Add(-6*time.Minute))
		}, http.StatusUnauthorized},
		{"future", func(t *testing.T) *http.Request {
			return signedRequest(t, "/slack/events", body, testSecret, testNow.Add(6*time.Minute))
		}, http.StatusUnauthorized},
		{"unsigned", func(t *testing.T) *http.Request {
			return httptest.NewRequest(http.MethodPost, "/slack/events", bytes.NewReader(body))
		}, http.StatusUnauthorized},
		{"body swapped after signing", func(t *testing.T) *http.Request {
			r := signedRequest(t, "/slack/events", body, testSecret, testNow)
			r.Body = httpBody(bytes.Replace(body, []byte("U1"), []byte("U2"), 1))
			return r
		}, http.StatusUnauthorized},
		{"forged interaction", func(t *testing.T) *http.Request {
			return signedRequest(t, "/slack/interactions", formBody(t, blockActionsJSON), "other-secret", testNow)
		}, http.StatusUnauthorized},
		{"GET", func(t *testing.T) *http.Request { return httptest.NewRequest(http.MethodGet, "/slack/events", nil) }, http.StatusMethodNotAllowed},
		{"unknown path", func(t *testing.T) *http.Request { return signedRequest(t, "/slack/other", body, testSecret, testNow) }, http.StatusNotFound},
		{"signed garbage", func(t *testing.T) *http.Request {
			return signedRequest(t, "/slack/events", []byte("{not json"), testSecret, testNow)
		}, http.StatusBadRequest},
		{"signed garbage interaction", func(t *testing.T) *http.Request {
			return signedRequest(t, "/slack/interactions", []byte("payload=%zz"), testSecret, testNow)
		}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			inbox := &fakeInbox{RecordFunc: func(context.Context, Item) (bool, error) { called = true; return false, nil }}
			w := serve(t, newTestHandler(t, inbox), tt.req(t))
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d (%q)", w.Code, tt.want, w.Body)
			}
			if called {
				t.Fatal("inbox called for a rejected request")
			}
		})
	}
}

func TestHandler_BodyOverCap(t *testing.T) {
	body := envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"`+strings.Repeat("x", 2000)+`","ts":"3.2","channel":"C1"}`)
	for _, knownLength := range []bool{true, false} {
		inbox, rec := newRecorder(t)
		h := newTestHandler(t, inbox)
		h.MaxBody = 1024
		r := signedRequest(t, "/slack/events", body, testSecret, testNow)
		if !knownLength {
			r.ContentLength = -1
			r.Body = httpBody(body)
		}
		if w := serve(t, h, r); w.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("known length %v: status %d", knownLength, w.Code)
		}
		if len(rec.Items()) != 0 {
			t.Fatal("recorded an oversized request")
		}
	}
}

func TestHandler_URLVerification(t *testing.T) {
	inbox, rec := newRecorder(t)
	body := []byte(`{"token":"x","challenge":"chal-123","type":"url_verification"}`)
	w := serve(t, newTestHandler(t, inbox).Events(), signedRequest(t, "/whatever", body, testSecret, testNow))
	if w.Code != http.StatusOK || w.Body.String() != `{"challenge":"chal-123"}` || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d body %q type %q", w.Code, w.Body, w.Header().Get("Content-Type"))
	}
	if len(rec.Items()) != 0 {
		t.Fatal("recorded a challenge")
	}
}

func TestHandler_IgnoredMessages(t *testing.T) {
	inners := map[string]string{
		"bot":     `{"type":"message","channel":"C1","channel_type":"channel","user":"U2","bot_id":"B1","text":"hi","ts":"1.1"}`,
		"own":     `{"type":"message","channel":"C1","channel_type":"channel","user":"UBOT","bot_id":"B0","text":"hi","ts":"1.1"}`,
		"edited":  `{"type":"message","subtype":"message_changed","hidden":true,"channel":"C1","ts":"1.2","message":{"user":"U1","text":"x","ts":"1.1"}}`,
		"deleted": `{"type":"message","subtype":"message_deleted","hidden":true,"channel":"C1","ts":"1.3","deleted_ts":"1.1"}`,
	}
	for name, inner := range inners {
		t.Run(name, func(t *testing.T) {
			inbox, rec := newRecorder(t)
			w := serve(t, newTestHandler(t, inbox), signedRequest(t, "/slack/events", envelopeJSON(t, "Ev1", inner), testSecret, testNow))
			if w.Code != http.StatusOK || w.Body.Len() != 0 {
				t.Fatalf("status %d body %q", w.Code, w.Body)
			}
			if len(rec.Items()) != 0 {
				t.Fatalf("recorded %+v", rec.Items())
			}
		})
	}
}

func TestHandler_InboxError(t *testing.T) {
	inbox := &fakeInbox{RecordFunc: func(context.Context, Item) (bool, error) { return false, errors.New("disk full") }}
	h := newTestHandler(t, inbox)
	for _, r := range []*http.Request{
		signedRequest(t, "/slack/events", envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`), testSecret, testNow),
		signedRequest(t, "/slack/interactions", formBody(t, blockActionsJSON), testSecret, testNow),
	} {
		w := serve(t, h, r)
		if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "disk") {
			t.Fatalf("%s: status %d body %q", r.URL.Path, w.Code, w.Body)
		}
	}
}

func TestHandler_NoInbox(t *testing.T) {
	h := newTestHandler(t, nil)
	r := signedRequest(t, "/slack/events", envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"hi","ts":"3.2","channel":"C1"}`), testSecret, testNow)
	if w := serve(t, h, r); w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d", w.Code)
	}
}

func TestHandler_Interaction(t *testing.T) {
	inbox, rec := newRecorder(t)
	h := newTestHandler(t, inbox)
	w := serve(t, h.Interactions(), signedRequest(t, "/slack/interactions", formBody(t, blockActionsJSON), testSecret, testNow))
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Fatalf("status %d body %q", w.Code, w.Body)
	}
	items := rec.Items()
	if len(items) != 1 {
		t.Fatalf("recorded %d items", len(items))
	}
	checkWellFormed(t, items[0])
	if a := items[0].Action(); a.Value != "appr_123:approve" || a.User != "U1" || items[0].ThreadKey != "slack:T1:C1:9.0" {
		t.Fatalf("item %s", mustJSON(t, items[0]))
	}
}

// The whole thing over a real socket, through ServeHTTP's routing.
func TestHandler_OverHTTP(t *testing.T) {
	inbox, rec := newRecorder(t)
	srv := httptest.NewServer(newTestHandler(t, inbox))
	defer srv.Close()
	r := signedRequest(t, "/slack/events", envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`), testSecret, testNow)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/slack/events", r.Body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = r.Header
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(rec.Items()) != 1 {
		t.Fatalf("status %d, %d items", resp.StatusCode, len(rec.Items()))
	}
}

func httpBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
