package toolstest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// Recorded is one request a Recorder received.
type Recorded struct {
	Method, Path, RawPath string
	Query                 url.Values
	Header                http.Header
	Body                  string
}

// Recorder is a real local HTTP service (an httptest.Server) that records
// every request it receives and then answers it with its handler.
type Recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Recorded
}

// NewRecorder starts a Recorder answering with h. It stops when the test
// ends.
func NewRecorder(t *testing.T, h http.HandlerFunc) *Recorder {
	t.Helper()
	rec := &Recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, Recorded{r.Method, r.URL.Path, r.URL.RawPath, r.URL.Query(), r.Header.Clone(), string(body)})
		rec.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// Requests are the requests received so far, in order.
func (rec *Recorder) Requests() []Recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Recorded(nil), rec.reqs...)
}

// Only is the one request received so far; the test fails unless there
// was exactly one.
func (rec *Recorder) Only(t *testing.T) Recorded {
	t.Helper()
	reqs := rec.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the service got %d requests, want 1", len(reqs))
	}
	return reqs[0]
}
