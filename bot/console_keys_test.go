package bot

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestConsole_KeySignInSharesTheAPIThrottle: the console's API-key
// sign-in had its own key check and no throttle, so a guesser could try
// keys there without limit. It now goes through the API's guard: wrong
// keys through either count against one budget per client address, a
// throttled address is refused unread on both, and every refusal is in
// brain_auth_failures_total.
func TestConsole_KeySignInSharesTheAPIThrottle(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	ta := newTestApp(t, "api_keys:\n  - {name: ops, key: "+opsKey+"}\n", Options{Clock: clock})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	signIn := func(key string) (int, string) {
		t.Helper()
		resp, err := browser.Get(ta.base + "/login")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := csrf.FindSubmatch(page)
		if m == nil {
			t.Fatalf("no csrf token on /login: %d %s", resp.StatusCode, page)
		}
		resp, err = browser.PostForm(ta.base+"/login", url.Values{"csrf": {string(m[1])}, "key": {key}, "next": {"/sessions"}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After") + " " + string(body)
	}

	for i := range 4 {
		if status, body := signIn("guess-" + strings.Repeat("x", i)); status != http.StatusUnauthorized {
			t.Fatalf("console guess %d: %d %s; want 401", i, status, body)
		}
	}
	ta.key = "guess-through-the-api"
	if status, _, body := ta.do("GET", "/v1/sessions", nil); status != http.StatusUnauthorized {
		t.Fatalf("API guess 5: %d %s; want 401", status, body)
	}
	if status, body := signIn("guess-6"); status != http.StatusUnauthorized {
		t.Fatalf("console guess 6: %d %s; want 401", status, body)
	}
	// Six wrong keys from this address, through both: the right key waits.
	if status, body := signIn(opsKey); status != http.StatusTooManyRequests || !strings.HasPrefix(body, "1 ") || !strings.Contains(body, "Too many wrong keys") {
		t.Fatalf("the right key at the console while throttled: %d %.200s; want 429, Retry-After: 1", status, body)
	}
	ta.key = opsKey
	if status, _, _ := ta.do("GET", "/v1/sessions", nil); status != http.StatusTooManyRequests {
		t.Fatalf("the right key at the API while throttled: %d; want 429", status)
	}
	now.Add(int64(time.Second))
	if status, body := signIn(opsKey); status != http.StatusOK || !strings.Contains(body, "/sessions") {
		t.Fatalf("the right key at the console after the wait: %d %.300s; want signed in", status, body)
	}
	_, _, metrics := ta.do("GET", "/metrics", nil)
	for _, want := range []string{`brain_auth_failures_total{reason="invalid_key"} 6`, `brain_auth_failures_total{reason="throttled"} 2`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}
}
