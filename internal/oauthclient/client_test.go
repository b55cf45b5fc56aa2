package oauthclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"brain/internal/oauthclient"
	"brain/internal/oauthclient/oauthtest"
)

// protected starts a resource server of as that echoes who authorized.
func protected(t *testing.T, as *oauthtest.Server) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as.Protect(srv.URL+"/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s:%s", r.Header.Get(oauthtest.GrantHeader), body)
		})).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func newClient() *oauthclient.Client {
	return &oauthclient.Client{RedirectURL: "https://brain.example/oauth/callback"}
}

func post(t *testing.T, c *http.Client, u, body string) (int, string) {
	t.Helper()
	resp, err := c.Post(u, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestTransport_AuthorizesThenRefreshesOnce(t *testing.T) {
	as := oauthtest.New()
	defer as.Close()
	server := protected(t, as)
	tokens := &oauthclient.MemoryTokens{}
	authorizations := 0
	c := newClient()
	tr := &oauthclient.Transport{Client: c, ServerURL: server, Tokens: tokens,
		Authorize: func(_ context.Context, f oauthclient.Flow) (url.Values, error) {
			authorizations++
			return oauthtest.Follow(f.URL, "alice")
		}}
	hc := &http.Client{Transport: tr}
	if code, body := post(t, hc, server, "one"); code != 200 || body != "alice:one" {
		t.Fatalf("first call: %d %q", code, body)
	}
	tok, ok, _ := tokens.Token(context.Background())
	if !ok || tok.RefreshToken == "" || tok.Scope != "read offline_access" {
		t.Fatalf("token after authorization: ok %v, scope %q, refresh token set %v", ok, tok.Scope, tok.RefreshToken != "")
	}
	as.ExpireAccess()
	if code, body := post(t, hc, server, "two"); code != 200 || body != "alice:two" {
		t.Fatalf("after expiry: %d %q", code, body)
	}
	if as.Refreshes() != 1 || authorizations != 1 {
		t.Fatalf("refreshes %d, authorizations %d; want 1 and 1", as.Refreshes(), authorizations)
	}
	next, _, _ := tokens.Token(context.Background())
	if next.RefreshToken == tok.RefreshToken {
		t.Fatal("the refresh token did not rotate")
	}
	// The rotated-out refresh token is refused, and its reuse revokes
	// the grant: the current one stops working too.
	ctx := context.Background()
	d, err := c.Discover(ctx, server, oauthclient.Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := c.Register(ctx, d.Server)
	if err != nil {
		t.Fatal(err)
	}
	g := oauthclient.Grant{Issuer: as.Issuer(), TokenEndpoint: d.Server.TokenEndpoint, ClientID: reg.ClientID, Method: reg.Method, Resource: d.Resource.Resource}
	if _, err := c.Refresh(ctx, g, tok.RefreshToken, ""); !errors.Is(err, oauthclient.ErrRefused) {
		t.Fatalf("a rotated-out refresh token: err = %v, want ErrRefused", err)
	}
	if _, ok := as.Check(next.AccessToken); ok {
		t.Fatal("reuse of a rotated-out refresh token did not revoke the grant")
	}
}

func TestTransport_WithoutAuthorizerNeedsConnection(t *testing.T) {
	as := oauthtest.New()
	defer as.Close()
	server := protected(t, as)
	var sent int
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		return http.DefaultTransport.RoundTrip(r)
	})
	hc := &http.Client{Transport: &oauthclient.Transport{Base: base, Client: newClient(), ServerURL: server, Tokens: &oauthclient.MemoryTokens{}}}
	_, err := hc.Post(server, "text/plain", strings.NewReader("x"))
	var need *oauthclient.AuthorizationRequiredError
	if !errors.As(err, &need) || need.Scope != "read" {
		t.Fatalf("err = %v, want AuthorizationRequiredError with scope read", err)
	}
	if sent != 1 {
		t.Fatalf("sent %d requests, want 1", sent)
	}
}

func TestTransport_RefusedRefreshForgetsToken(t *testing.T) {
	as := oauthtest.New()
	defer as.Close()
	server := protected(t, as)
	tokens := &oauthclient.MemoryTokens{}
	c := newClient()
	hc := &http.Client{Transport: &oauthclient.Transport{Client: c, ServerURL: server, Tokens: tokens,
		Authorize: func(_ context.Context, f oauthclient.Flow) (url.Values, error) { return oauthtest.Follow(f.URL, "bob") }}}
	if code, body := post(t, hc, server, "x"); code != 200 || body != "bob:x" {
		t.Fatalf("%d %q", code, body)
	}
	as.RevokeSubject("bob")
	// A transport that may not authorize inline: the refresh is refused,
	// the token forgotten, the caller told to connect.
	hc2 := &http.Client{Transport: &oauthclient.Transport{Client: c, ServerURL: server, Tokens: tokens}}
	_, err := hc2.Post(server, "text/plain", strings.NewReader("y"))
	var need *oauthclient.AuthorizationRequiredError
	if !errors.As(err, &need) {
		t.Fatalf("err = %v, want AuthorizationRequiredError", err)
	}
	if _, ok, _ := tokens.Token(context.Background()); ok {
		t.Fatal("the token of a refused refresh was kept")
	}
}

func TestFinish_ChecksStateISSAndVerifier(t *testing.T) {
	as := oauthtest.New()
	defer as.Close()
	server := protected(t, as)
	c := newClient()
	ctx := context.Background()
	d, err := c.Discover(ctx, server, oauthclient.Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		change  func(f *oauthclient.Flow, q url.Values)
		wantErr string
	}{
		{"ok", func(*oauthclient.Flow, url.Values) {}, ""},
		{"wrong state", func(_ *oauthclient.Flow, q url.Values) { q.Set("state", "x") }, "state"},
		{"wrong iss", func(_ *oauthclient.Flow, q url.Values) { q.Set("iss", as.Issuer()+"/") }, "issuer"},
		{"missing iss", func(_ *oauthclient.Flow, q url.Values) { q.Del("iss") }, "iss parameter"},
		{"wrong verifier", func(f *oauthclient.Flow, _ url.Values) { f.Verifier = strings.Repeat("a", 43) }, "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := c.Start(ctx, d, oauthclient.Scope(d))
			if err != nil {
				t.Fatal(err)
			}
			q, err := oauthtest.Follow(f.URL, "alice")
			if err != nil {
				t.Fatal(err)
			}
			tt.change(&f, q)
			tok, err := c.Finish(ctx, f, q)
			if tt.wantErr == "" {
				if err != nil || tok.AccessToken == "" {
					t.Fatalf("Finish: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one about %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), f.Verifier) || strings.Contains(err.Error(), q.Get("code")) {
				t.Fatal("the error holds a secret")
			}
		})
	}
}

func TestParseChallenge(t *testing.T) {
	tests := []struct {
		in   string
		want oauthclient.Challenge
		ok   bool
	}{
		{`Bearer resource_metadata="https://a/x", scope="a b"`, oauthclient.Challenge{ResourceMetadata: "https://a/x", Scope: "a b"}, true},
		{`Basic realm="x", Bearer error="insufficient_scope", scope=write`, oauthclient.Challenge{Scope: "write", Error: "insufficient_scope"}, true},
		{`bearer scope="a\"b"`, oauthclient.Challenge{Scope: `a"b`}, true},
		{`Basic realm="x"`, oauthclient.Challenge{}, false},
		{`Bearer`, oauthclient.Challenge{}, true},
	}
	for _, tt := range tests {
		got, ok := oauthclient.ParseChallenge([]string{tt.in})
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseChallenge(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDiscover_PathsAndMismatches(t *testing.T) {
	var seen []string
	var srv *httptest.Server
	resource, issuer := "", ""
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path)
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, resource, srv.URL+"/tenant1")
		case "/tenant1/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%s/a","token_endpoint":"%s/t","code_challenge_methods_supported":["S256"]}`, issuer, srv.URL, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newClient()
	ctx := context.Background()

	resource, issuer = srv.URL, srv.URL+"/tenant1"
	seen = nil
	if _, err := c.Discover(ctx, srv.URL+"/mcp", oauthclient.Challenge{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"}
	if !slices.Equal(seen, want) {
		t.Fatalf("discovery asked %q, want %q", seen, want)
	}

	resource = "https://evil.example.com/mcp"
	if _, err := c.Discover(ctx, srv.URL+"/mcp", oauthclient.Challenge{}); err == nil || !strings.Contains(err.Error(), "not for this server") {
		t.Fatalf("a resource mismatch: err = %v", err)
	}
	resource, issuer = srv.URL, "https://attacker.example.com"
	if _, err := c.Discover(ctx, srv.URL+"/mcp", oauthclient.Challenge{}); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("an issuer mismatch: err = %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
