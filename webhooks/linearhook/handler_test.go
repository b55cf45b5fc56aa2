package linearhook

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

const testSecret = "lin_wh_test_secret"

func newTestHandler(t testing.TB, inbox Inbox) *Handler {
	t.Helper()
	return &Handler{
		Secret: testSecret,
		Inbox:  inbox,
		Clock:  func() time.Time { return testNow },
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// signedRequest builds a POST of body signed with secret, as Linear sends it.
func signedRequest(t testing.TB, body []byte, secret, delivery string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/linear/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.Header.Set(HeaderSignature, Signature(secret, body))
	r.Header.Set(HeaderEvent, "AgentSessionEvent")
	if delivery != "" {
		r.Header.Set(HeaderDelivery, delivery)
	}
	return r
}

func serve(t testing.TB, h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandler_Created(t *testing.T) {
	inbox, rec := newRecorder(t)
	const delivery = "234d1a4e-b617-4388-90fe-adc3633d6b72"
	w := serve(t, newTestHandler(t, inbox), signedRequest(t, mustJSON(t, createdEvent(t, testNow)), testSecret, delivery))
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Fatalf("status %d body %q", w.Code, w.Body)
	}
	items := rec.Items()
	if len(items) != 1 {
		t.Fatalf("recorded %d items", len(items))
	}
	checkWellFormed(t, items[0])
	if it := items[0]; it.DeliveryID != delivery || it.EventKey != "created:"+sessionID || it.Kind != KindCreated {
		t.Fatalf("item %+v", it)
	}
}

func TestHandler_PromptedStop(t *testing.T) {
	inbox, rec := newRecorder(t)
	w := serve(t, newTestHandler(t, inbox), signedRequest(t, mustJSON(t, promptedEvent(t, testNow, "", "stop")), testSecret, "d-1"))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	if items := rec.Items(); len(items) != 1 || !items[0].Stop || items[0].Kind != KindPrompted {
		t.Fatalf("items %+v", items)
	}
}

// A retry reuses Linear-Delivery (with a fresh timestamp, so a new body and
// signature): recorded once, answered 200 both times.
func TestHandler_RetryIsDuplicate(t *testing.T) {
	inbox, rec := newRecorder(t)
	h := newTestHandler(t, inbox)
	for i, at := range []time.Time{testNow.Add(-time.Second), testNow} {
		r := signedRequest(t, mustJSON(t, promptedEvent(t, at, "hello", "")), testSecret, "d-retry")
		if w := serve(t, h, r); w.Code != http.StatusOK {
			t.Fatalf("delivery %d: status %d", i, w.Code)
		}
	}
	if n := len(rec.Items()); n != 1 {
		t.Fatalf("recorded %d items, want 1", n)
	}
}

// Without (or with a malformed) Linear-Delivery the signed event key dedupes.
func TestHandler_DeliveryFallback(t *testing.T) {
	for _, hdr := range []string{"", "has space", strings.Repeat("x", 200)} {
		inbox, rec := newRecorder(t)
		w := serve(t, newTestHandler(t, inbox), signedRequest(t, mustJSON(t, promptedEvent(t, testNow, "hi", "")), testSecret, hdr))
		if items := rec.Items(); w.Code != http.StatusOK || len(items) != 1 || items[0].DeliveryID != "prompted:"+activityID {
			t.Fatalf("header %q: status %d items %+v", hdr, w.Code, items)
		}
	}
}

func TestHandler_Rejected(t *testing.T) {
	body := mustJSON(t, createdEvent(t, testNow))
	tests := []struct {
		name string
		req  func(t *testing.T) *http.Request
		want int
	}{
		{"forged", func(t *testing.T) *http.Request { return signedRequest(t, body, "other-secret", "d") }, http.StatusUnauthorized},
		{"unsigned", func(t *testing.T) *http.Request {
			r := signedRequest(t, body, testSecret, "d")
			r.Header.Del(HeaderSignature)
			return r
		}, http.StatusUnauthorized},
		{"stale", func(t *testing.T) *http.Request {
			return signedRequest(t, mustJSON(t, createdEvent(t, testNow.Add(-61*time.Second))), testSecret, "d")
		}, http.StatusUnauthorized},
		{"future", func(t *testing.T) *http.Request {
			return signedRequest(t, mustJSON(t, createdEvent(t, testNow.Add(61*time.Second))), testSecret, "d")
		}, http.StatusUnauthorized},
		// The unsigned linear-timestamp header cannot make a stale body fresh.
		{"stale body, fresh header", func(t *testing.T) *http.Request {
			r := signedRequest(t, mustJSON(t, createdEvent(t, testNow.Add(-time.Hour))), testSecret, "d")
			r.Header.Set("Linear-Timestamp", strconv.FormatInt(testNow.UnixMilli(), 10))
			return r
		}, http.StatusUnauthorized},
		{"body swapped after signing", func(t *testing.T) *http.Request {
			r := signedRequest(t, body, testSecret, "d")
			r.Body = io.NopCloser(bytes.NewReader(bytes.Replace(body, []byte("implement"), []byte("delete all"), 1)))
			return r
		}, http.StatusUnauthorized},
		{"GET", func(t *testing.T) *http.Request { return httptest.NewRequest(http.MethodGet, "/linear/webhook", nil) }, http.StatusMethodNotAllowed},
		{"signed but broken fields", func(t *testing.T) *http.Request {
			b := []byte(`{"type":"AgentSessionEvent","action":"created","agentSession":"s1","webhookTimestamp":` + strconv.FormatInt(testNow.UnixMilli(), 10) + `}`)
			return signedRequest(t, b, testSecret, "d")
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

func TestHandler_NoSecretRejectsAll(t *testing.T) {
	inbox, _ := newRecorder(t)
	h := newTestHandler(t, inbox)
	h.Secret = ""
	if w := serve(t, h, signedRequest(t, mustJSON(t, createdEvent(t, testNow)), "", "d")); w.Code != http.StatusUnauthorized {
		t.Fatalf("status %d", w.Code)
	}
}

func TestHandler_BodyOverCap(t *testing.T) {
	ev := createdEvent(t, testNow)
	ev["promptContext"] = strings.Repeat("x", 4000)
	body := mustJSON(t, ev)
	for _, knownLength := range []bool{true, false} {
		inbox, rec := newRecorder(t)
		h := newTestHandler(t, inbox)
		h.MaxBody = 1024
		r := signedRequest(t, body, testSecret, "d")
		if !knownLength {
			r.ContentLength = -1
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if w := serve(t, h, r); w.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("known length %v: status %d", knownLength, w.Code)
		}
		if len(rec.Items()) != 0 {
			t.Fatal("recorded an oversized request")
		}
	}
}

// Other webhook types and actions are acknowledged, never recorded.
func TestHandler_Ignored(t *testing.T) {
	ts := strconv.FormatInt(testNow.UnixMilli(), 10)
	bodies := map[string][]byte{
		"issue":        []byte(`{"type":"Issue","action":"create","data":{"id":"i1"},"webhookTimestamp":` + ts + `}`),
		"other action": []byte(`{"type":"AgentSessionEvent","action":"removed","agentSession":{"id":"s1"},"webhookTimestamp":` + ts + `}`),
		"empty prompt": mustJSON(t, promptedEvent(t, testNow, "", "")),
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			inbox, rec := newRecorder(t)
			w := serve(t, newTestHandler(t, inbox), signedRequest(t, body, testSecret, "d"))
			if w.Code != http.StatusOK || w.Body.Len() != 0 || len(rec.Items()) != 0 {
				t.Fatalf("status %d body %q items %+v", w.Code, w.Body, rec.Items())
			}
		})
	}
}

func TestHandler_InboxError(t *testing.T) {
	inbox := &fakeInbox{RecordFunc: func(context.Context, Item) (bool, error) { return false, errors.New("disk full") }}
	w := serve(t, newTestHandler(t, inbox), signedRequest(t, mustJSON(t, createdEvent(t, testNow)), testSecret, "d"))
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "disk") {
		t.Fatalf("status %d body %q", w.Code, w.Body)
	}
}

func TestHandler_NoInbox(t *testing.T) {
	w := serve(t, newTestHandler(t, nil), signedRequest(t, mustJSON(t, createdEvent(t, testNow)), testSecret, "d"))
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d", w.Code)
	}
}

// The whole thing over a real socket with the real clock.
func TestHandler_OverHTTP(t *testing.T) {
	inbox, rec := newRecorder(t)
	h := newTestHandler(t, inbox)
	h.Clock = nil
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := mustJSON(t, createdEvent(t, time.Now()))
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/linear/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(HeaderSignature, Signature(testSecret, body))
	req.Header.Set(HeaderDelivery, "d-http")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(rec.Items()) != 1 {
		t.Fatalf("status %d, %d items", resp.StatusCode, len(rec.Items()))
	}
}
