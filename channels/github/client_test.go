package github

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestClient_PermissionCachedAndRateLimitsMarked(t *testing.T) {
	var permCalls, commentCalls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/web/collaborators/alice/permission":
			permCalls.Add(1)
			_, _ = w.Write([]byte(`{"permission":"write","user":{"login":"alice"}}`))
		case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/web/collaborators/eve/permission":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Not Found"}`))
		case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/web/issues/3/comments":
			commentCalls.Add(1)
			// GitHub's secondary rate limit, as it answers it.
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := New(srv.URL, "tok", srv.Client(), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		if ok, err := c.CanWrite(ctx, "acme", "web", "alice"); err != nil || !ok {
			t.Fatalf("alice: %v %v", ok, err)
		}
	}
	if permCalls.Load() != 1 {
		t.Fatalf("%d permission calls; want 1 (cached)", permCalls.Load())
	}
	now = now.Add(PermissionTTL + time.Second)
	if _, err := c.CanWrite(ctx, "acme", "web", "alice"); err != nil || permCalls.Load() != 2 {
		t.Fatalf("after the ttl: %d calls, %v", permCalls.Load(), err)
	}
	if ok, err := c.CanWrite(ctx, "acme", "web", "eve"); err != nil || ok {
		t.Fatalf("a stranger: %v %v", ok, err)
	}
	_, err = c.Comment(ctx, Thread{"acme", "web", 3}, "hi")
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("secondary limit not marked: %v", err)
	}
}
