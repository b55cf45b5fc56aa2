package linear

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"brain/channels/linear/linearfake"
)

const (
	testToken   = "lin_oauth_test_token"
	testSession = "5c2a2e8e-6d3a-4e0b-9a43-0d7a1c5b8f11"
)

// newClient starts a fake Linear and a Client talking to it, with retry
// waits shrunk so tests stay fast; both are closed when the test ends.
func newClient(t *testing.T) (*Client, *linearfake.Server) {
	t.Helper()
	fake := linearfake.New(testToken)
	t.Cleanup(fake.Close)
	c := New(fake.URL(), testToken, nil, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})))
	c.backoff = time.Millisecond
	return c, fake
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// jsonEqual fails the test unless got and want are the same JSON value.
func jsonEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("JSON differs\n got %s\nwant %s", gb, wb)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
