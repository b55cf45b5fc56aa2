package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestServer_MountedFailuresAreEnvelopes(t *testing.T) {
	s := newServer(t, sessionEngine(), &fakeSchedules{})
	s.api.Mount("/hook/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hook/ok":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"challenge":"c"}`))
		case "/hook/empty":
			w.WriteHeader(http.StatusOK)
		case "/hook/signature":
			http.Error(w, "invalid signature", http.StatusUnauthorized)
		case "/hook/large":
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		case "/hook/method":
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		case "/hook/inbox":
			http.Error(w, "disk full at /var/db", http.StatusInternalServerError)
		case "/hook/bare":
			w.WriteHeader(http.StatusBadRequest)
		default:
			http.NotFound(w, r)
		}
	}))
	s.api.Mount("POST /only-post", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	cases := []struct {
		method, path string
		status       int
		code, msg    string
	}{
		{"POST", "/hook/signature", 401, "unauthorized", "invalid signature"},
		{"POST", "/hook/large", 413, "too_large", "request body too large"},
		{"GET", "/hook/method", 405, "method_not_allowed", "method not allowed"},
		{"POST", "/hook/inbox", 500, "internal", "internal error"},
		{"POST", "/hook/bare", 400, "invalid_request", "bad request"},
		{"POST", "/hook/nope", 404, "not_found", "404 page not found"},
		{"GET", "/only-post", 405, "method_not_allowed", "GET is not allowed on /only-post"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			// Webhooks arrive from anywhere, through proxies, without API keys.
			w := s.doFrom("192.0.2.7:5000", c.method, c.path, "", "X-Forwarded-For", "203.0.113.9")
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
			if env := envelope(t, w); env.Error.Code != c.code || env.Error.Message != c.msg {
				t.Fatalf("envelope %+v, want %s %q", env, c.code, c.msg)
			}
		})
	}
	if w := s.do("GET", "/hook/method", ""); w.Header().Get("Allow") != http.MethodPost {
		t.Fatalf("Allow %q: the handler's headers must stay", w.Header().Get("Allow"))
	}
	if w := s.do("GET", "/only-post", ""); w.Header().Get("Allow") != http.MethodPost {
		t.Fatalf("Allow %q: a 405 names the methods the route takes", w.Header().Get("Allow"))
	}
	if !strings.Contains(s.logs.String(), "disk full") {
		t.Errorf("an internal failure's text is logged, not shown:\n%s", s.logs)
	}

	w := s.doFrom("192.0.2.7:5000", "POST", "/hook/ok", "")
	if w.Code != 200 || w.Body.String() != `{"challenge":"c"}` || w.Header().Get("X-Request-ID") == "" {
		t.Fatalf("success %d %q, request id %q", w.Code, w.Body, w.Header().Get("X-Request-ID"))
	}
	if w := s.do("POST", "/hook/empty", ""); w.Code != 200 || w.Body.Len() != 0 {
		t.Fatalf("empty success %d %q", w.Code, w.Body)
	}
}

func TestServer_MountedHTMLFailuresPassThrough(t *testing.T) {
	s := newServer(t, sessionEngine(), &fakeSchedules{})
	s.api.Mount("GET /page", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("<p>This install link expired.</p>"))
	}))
	w := s.do("GET", "/page", "")
	if w.Code != http.StatusBadRequest || w.Body.String() != "<p>This install link expired.</p>" || w.Header().Get("X-Request-ID") == "" {
		t.Fatalf("html failure %d %q, request id %q", w.Code, w.Body, w.Header().Get("X-Request-ID"))
	}
}
