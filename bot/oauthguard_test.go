package bot

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"brain/internal/netguard"
)

// TestOAuthHTTP_RefusesInsideAddresses: the OAuth client of a server on
// the internet refuses URLs (from the server's metadata) that lead to
// loopback or private addresses, checked on the address dialled; the
// client of a server that is itself on loopback may reach loopback.
func TestOAuthHTTP_RefusesInsideAddresses(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer inside.Close()

	_, err := oauthHTTP("https://mcp.tracker.example/mcp").Get(inside.URL + "/.well-known/oauth-authorization-server")
	var blocked *netguard.BlockedError
	if !errors.As(err, &blocked) {
		t.Fatalf("a public server's OAuth client reached %s: err = %v, want blocked_host", inside.URL, err)
	}
	resp, err := oauthHTTP(inside.URL + "/mcp").Get(inside.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatalf("a loopback server's OAuth client was refused its own host: %v", err)
	}
	resp.Body.Close()

	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:8080/mcp", true},
		{"http://localhost/mcp", true},
		{"http://10.1.2.3/mcp", true},
		{"http://[::1]/mcp", true},
		{"https://mcp.example.com/mcp", false},
		{"https://93.184.216.34/mcp", false},
	} {
		if got := privateServer(tc.url); got != tc.want {
			t.Errorf("privateServer(%s) = %v, want %v", tc.url, got, tc.want)
		}
	}
}
