package linearfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func tokenRequest(t *testing.T, s *Server, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(s.TokenURL(), form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func TestServer_OAuthRotationAndExpiry(t *testing.T) {
	s := New("")
	t.Cleanup(s.Close)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	s.SetClock(func() time.Time { return time.Unix(0, now.Load()) })
	s.EnableOAuth("cid", "csecret", time.Minute)
	s.AddOrganization(Organization{ID: "org-a", Name: "Acme", URLKey: "acme", AppUserID: "app-a"})

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(s.AuthorizeURL() + "?client_id=cid&response_type=code&state=st&redirect_uri=" + url.QueryEscape("https://b.example/cb"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc.Query().Get("state") != "st" || loc.Query().Get("code") == "" {
		t.Fatalf("authorize %d %q", resp.StatusCode, loc)
	}
	base := url.Values{"client_id": {"cid"}, "client_secret": {"csecret"}}
	with := func(kv ...string) url.Values {
		f := url.Values{}
		for k, v := range base {
			f[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	st, body := tokenRequest(t, s, with("grant_type", "authorization_code", "code", loc.Query().Get("code"), "redirect_uri", "https://b.example/cb"))
	if st != 200 || body["expires_in"] != float64(60) {
		t.Fatalf("exchange %d %v", st, body)
	}
	if st, _ := tokenRequest(t, s, with("grant_type", "authorization_code", "code", loc.Query().Get("code"), "redirect_uri", "https://b.example/cb")); st != 400 {
		t.Errorf("a code was exchanged twice (%d)", st)
	}
	access, refresh := body["access_token"].(string), body["refresh_token"].(string)
	viewer := `query Viewer { viewer { id } organization { id } }`
	if a := post(t, s, "Bearer "+access, viewer, `{}`); a.Status != 200 || !strings.Contains(string(a.Data["organization"]), "org-a") {
		t.Fatalf("viewer %d %s", a.Status, a.raw)
	}
	now.Add(int64(time.Minute))
	if a := post(t, s, "Bearer "+access, viewer, `{}`); a.Status != http.StatusUnauthorized || a.code() != codeAuth {
		t.Fatalf("an expired token was accepted: %d %s", a.Status, a.raw)
	}
	st, body = tokenRequest(t, s, with("grant_type", "refresh_token", "refresh_token", refresh))
	if st != 200 || body["refresh_token"] == refresh || s.Refreshes("org-a") != 1 {
		t.Fatalf("refresh %d %v", st, body)
	}
	if st, body := tokenRequest(t, s, with("grant_type", "refresh_token", "refresh_token", refresh)); st != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("a used refresh token was accepted: %d %v", st, body)
	}
	if a := post(t, s, "Bearer "+body["access_token"].(string), viewer, `{}`); a.Status != 200 {
		t.Fatalf("the refreshed token was refused: %s", a.raw)
	}
	s.RevokeTokens("org-a")
	if st, _ := tokenRequest(t, s, with("grant_type", "refresh_token", "refresh_token", body["refresh_token"].(string))); st != 400 {
		t.Fatal("a revoked refresh token was accepted")
	}
	if st, body := tokenRequest(t, s, url.Values{"grant_type": {"refresh_token"}, "client_id": {"cid"}, "client_secret": {"wrong"}}); st != 401 || body["error"] != "invalid_client" {
		t.Fatalf("wrong client secret: %d %v", st, body)
	}
}

func TestServer_PlanValidation(t *testing.T) {
	s := newServer(t)
	ok := `{"id":"s-1","input":{"plan":[{"content":"Read","status":"inProgress"}]}}`
	if a := post(t, s, "Bearer "+token, update, ok); a.code() != "" {
		t.Fatalf("valid plan refused: %s", a.raw)
	}
	for _, bad := range []string{
		`{"id":"s-1","input":{"plan":{"steps":[]}}}`,
		`{"id":"s-1","input":{"plan":[{"content":"Read","status":"done"}]}}`,
		`{"id":"s-1","input":{"plan":[{"content":"","status":"pending"}]}}`,
		`{"id":"s-1","input":{"plan":[{"content":"x","status":"pending","extra":1}]}}`,
	} {
		if a := post(t, s, "Bearer "+token, update, bad); a.code() == "" {
			t.Errorf("%s accepted", bad)
		}
	}
}
