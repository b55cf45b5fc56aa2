package bot

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The console lives beside the API: its pages at /, the API's routes and
// error envelope untouched under /v1.
func TestConsole_MountedBesideTheAPI(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	s := ta.createSession()
	status, hdr, body := ta.do("GET", "/", nil)
	if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") ||
		!strings.Contains(hdr.Get("Content-Security-Policy"), "script-src 'self'") || hdr.Get("X-Request-ID") == "" {
		t.Fatalf("GET /: %d %v", status, hdr)
	}
	if !strings.Contains(string(body), `href="/sessions/`+s.ID+`"`) {
		t.Fatalf("the list lacks the API's session:\n%s", body)
	}
	if status, _, body := ta.do("GET", "/sessions/"+s.ID, nil); status != http.StatusOK || !strings.Contains(string(body), `id="timeline"`) {
		t.Fatalf("session page: %d", status)
	}
	status, _, body = ta.do("GET", "/v1/nothing", nil)
	var env struct{ Error struct{ Code string } }
	if status != http.StatusNotFound || json.Unmarshal(body, &env) != nil || env.Error.Code != "not_found" {
		t.Fatalf("GET /v1/nothing: %d %s, want the API's 404 envelope", status, body)
	}
	if status, _, _ := ta.do("GET", "/livez", nil); status != http.StatusOK {
		t.Fatalf("/livez: %d", status)
	}
}

func TestConsole_Disabled(t *testing.T) {
	ta := newTestApp(t, "console: {disabled: true}\n", Options{})
	status, _, body := ta.do("GET", "/", nil)
	var env struct{ Error struct{ Code string } }
	if status != http.StatusNotFound || json.Unmarshal(body, &env) != nil || env.Error.Code != "not_found" {
		t.Fatalf("GET / with the console off: %d %s", status, body)
	}
}

func TestConsole_NeedsASignInWithKeys(t *testing.T) {
	ta := newTestApp(t, "api_keys: [{name: ops, key: console-key-123456-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f}]\n", Options{})
	req, _ := http.NewRequest("GET", ta.base+"/approvals", nil)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fapprovals" {
		t.Fatalf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}
