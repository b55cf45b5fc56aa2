package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// offSite are the forms of "next" the attack tried: each would send a
// freshly signed-in browser to another site if let through.
var offSite = []string{
	"/%09/evil.example",
	"/%0a/evil.example",
	"/%0d/evil.example",
	"/%00/evil.example",
	"/\t/evil.example",
	"//evil.example",
	"///evil.example",
	"/\\evil.example",
	"/%5Cevil.example",
	"/%2F%2Fevil.example",
	"/%252F%252Fevil.example",
	"https://evil.example",
	"http:evil.example",
	"javascript:alert(1)",
	"\\/evil.example",
	" //evil.example",
	"evil.example",
	"//user@evil.example/sessions",
}

func TestSafeNext(t *testing.T) {
	if len(offSite) != 18 {
		t.Fatalf("%d forms, the attack had 18", len(offSite))
	}
	for _, next := range offSite {
		if got := safeNext(next); got != "/" {
			t.Errorf("safeNext(%q) = %q, want /", next, got)
		}
	}
	for _, next := range []string{"/", "/sessions/ses1", "/approvals/apr1?notice=approved", "/sessions?status=idle&page=2", "/sessions/a%20b"} {
		if got := safeNext(next); got != next {
			t.Errorf("safeNext(%q) = %q, want it kept", next, got)
		}
	}
}

// TestConsole_SignInStaysOnSite signs in through the form with each
// off-site "next": the page that follows the sign-in loads "/".
func TestConsole_SignInStaysOnSite(t *testing.T) {
	c := newConsole(t, keyed())
	for _, next := range offSite {
		_, page := c.get("/login?next=" + url.QueryEscape(next))
		resp, body := c.post("/login", url.Values{"csrf": {c.csrf(page)}, "key": {testKey}, "next": {next}})
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `content="0;url=/"`) {
			t.Errorf("next %q: %d\n%s", next, resp.StatusCode, body)
		}
		if resp, _ := c.post("/logout", url.Values{"csrf": {c.csrf(body)}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout: %d", resp.StatusCode)
		}
	}
}
