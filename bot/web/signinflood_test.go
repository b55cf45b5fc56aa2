package web

import (
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"
)

// TestConsole_SignInFlood: ten people start "Sign in with Slack", then
// one address starts 3,000 more without cookies; the ten finish and are
// all signed in, and the flood stored nothing in the console.
func TestConsole_SignInFlood(t *testing.T) {
	c, _ := slackConsole(t, "T0FAKE")
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	type person struct {
		client *http.Client
		at     string
	}
	people := make([]person, 10)
	for i := range people {
		jar, _ := cookiejar.New(nil)
		p := person{client: &http.Client{Jar: jar, CheckRedirect: noRedirect}}
		resp, err := p.client.Get(c.srv.URL + "/login/slack?next=/approvals")
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("person %d start: %v %v", i, err, resp)
		}
		resp.Body.Close()
		p.at = resp.Header.Get("Location")
		people[i] = p
	}
	before := c.visitors()
	flood := &http.Client{CheckRedirect: noRedirect}
	for i := 0; i < 3000; i++ {
		resp, err := flood.Get(c.srv.URL + "/login/slack?next=/")
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("flood start %d: %v %v", i, err, resp)
		}
		resp.Body.Close()
	}
	if after := c.visitors(); after != before {
		t.Errorf("3,000 starts left %d console sessions in memory (before: %d)", after, before)
	}
	for i, p := range people {
		resp, err := p.client.Get(p.at) // Slack's page sends the browser back
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp, err = p.client.Get(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("person %d callback: %d", i, resp.StatusCode)
			continue
		}
		resp, err = p.client.Get(c.srv.URL + "/approvals")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("person %d is not signed in: %d", i, resp.StatusCode)
		}
	}
}

// visitors counts the console sessions held in memory.
func (c *console) visitors() int {
	c.s.auth.mu.Lock()
	defer c.s.auth.mu.Unlock()
	return len(c.s.auth.visitors)
}

func TestStateCookie(t *testing.T) {
	s := newStateSigner()
	now := time.Unix(1_800_000_000, 0)
	p := pendingSignIn{State: "st", Nonce: "no", Next: "/approvals", Expires: now.Add(stateTTL).Unix()}
	v := s.seal(p)
	if got, ok := s.open(v, now); !ok || got != p {
		t.Fatalf("open(seal) = %+v %v", got, ok)
	}
	if _, ok := s.open(v, now.Add(stateTTL)); ok {
		t.Error("an expired sign-in opened")
	}
	if _, ok := newStateSigner().open(v, now); ok {
		t.Error("another key's cookie opened")
	}
	payload, sig, _ := strings.Cut(v, ".")
	forged := s.seal(pendingSignIn{State: "st", Nonce: "mine", Next: "/", Expires: p.Expires})
	fpayload, _, _ := strings.Cut(forged, ".")
	for _, bad := range []string{"", payload, payload + ".", "." + sig, fpayload + "." + sig, payload + "." + sig + "x", payload + "x." + sig} {
		if _, ok := s.open(bad, now); ok {
			t.Errorf("open(%q) accepted", bad)
		}
	}
}
