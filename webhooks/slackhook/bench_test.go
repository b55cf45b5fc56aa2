package slackhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// benchRequest returns a signed mention request factory; each call builds a
// fresh request over the same bytes so RunParallel workers share nothing.
func benchRequest(b *testing.B) func() *http.Request {
	b.Helper()
	body := envelopeJSON(b, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> please summarise the incident in this thread","ts":"1700000000.000300","thread_ts":"1700000000.000100","channel":"C1","event_ts":"1700000000.000300"}`)
	stamp := strconv.FormatInt(testNow.Unix(), 10)
	sig := Signature(testSecret, stamp, body)
	return func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/slack/events", bytes.NewReader(body))
		r.Header.Set(HeaderTimestamp, stamp)
		r.Header.Set(HeaderSignature, sig)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
}

// BenchmarkHandler_SignedEvent: read, verify, parse and Record (no-op) one
// signed app_mention.
func BenchmarkHandler_SignedEvent(b *testing.B) {
	newReq := benchRequest(b)
	h := newTestHandler(b, &fakeInbox{RecordFunc: func(context.Context, Item) (bool, error) { return false, nil }})
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, newReq())
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
		}
	})
}

// BenchmarkVerifyOnly is the floor: the same request read under the cap and
// verified, nothing parsed or recorded.
func BenchmarkVerifyOnly(b *testing.B) {
	newReq := benchRequest(b)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readCapped(r, DefaultMaxBody)
		if err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if err := Verify(testSecret, r.Header, body, testNow); err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			bare.ServeHTTP(w, newReq())
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
		}
	})
}

func readCapped(r *http.Request, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, limit))
	return buf.Bytes(), err
}
