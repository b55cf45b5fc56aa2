package linearbridge

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"brain/channels/linear"
)

// TestInstall_FloodIsBounded: 3,000 unauthenticated install starts from
// one address record 10 states (the rest are refused with 429, writing
// nothing); then 10 people elsewhere start and complete their installs.
func TestInstall_FloodIsBounded(t *testing.T) {
	clock := newTestClock()
	fake := oauthFake(t, clock)
	st := openStore(t, filepath.Join(t.TempDir(), "brain.db"))
	in := &Installer{Store: st, OAuth: linear.OAuth{ClientID: "client-1", ClientSecret: "secret-1", TokenURL: fake.TokenURL()},
		AuthorizeURL: fake.AuthorizeURL(), ClientID: "client-1", PublicURL: "https://brain.example.com", APIURL: fake.URL(),
		Now: clock.Now, Log: discard()}
	start := func(addr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", InstallPath, nil)
		r.RemoteAddr = addr + ":40000"
		w := httptest.NewRecorder()
		in.Install(w, r)
		return w
	}
	recorded := 0
	for i := 0; i < 3000; i++ {
		switch w := start("203.0.113.9"); w.Code {
		case http.StatusFound:
			recorded++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("flood start %d: %d", i, w.Code)
		}
	}
	if recorded != maxStartsPerAddr {
		t.Fatalf("the flood recorded %d install states, want %d", recorded, maxStartsPerAddr)
	}
	for i := 0; i < 10; i++ {
		w := start(fmt.Sprintf("198.51.100.%d", i+1))
		if w.Code != http.StatusFound {
			t.Fatalf("person %d start: %d", i, w.Code)
		}
		loc, _ := url.Parse(w.Header().Get("Location"))
		state := loc.Query().Get("state")
		r := httptest.NewRequest("GET", CallbackPath+"?code="+url.QueryEscape(authorizeCode(t, fake, in))+"&state="+state, nil)
		cw := httptest.NewRecorder()
		in.Callback(cw, r)
		if cw.Code != http.StatusOK || !strings.Contains(cw.Body.String(), "connected to the Linear workspace") {
			t.Fatalf("person %d callback: %d %s", i, cw.Code, cw.Body.String())
		}
	}
}
