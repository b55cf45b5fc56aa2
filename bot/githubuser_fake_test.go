package bot

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// ghOAuthFake is GitHub's web flow for GitHub Apps as GitHub documents it
// (login/oauth/authorize, login/oauth/access_token: expiring user access
// tokens ghu_ with rotating refresh tokens ghr_, errors as 200 with an
// error body) and the REST API's GET /user, which answers only to a live
// user token.
type ghOAuthFake struct {
	srv          *httptest.Server
	clientID     string
	clientSecret string

	mu        sync.Mutex
	n         int
	codes     map[string]ghCode
	access    map[string]string // live access token -> login
	refresh   map[string]string // live refresh token -> login
	pair      map[string]string // refresh token -> its access token
	refreshes int
	userCalls []string // the login each GET /user was answered for
	apiCalls  []string // "METHOD path as WHO" of the issue endpoints: a login, "app" or "?"
	comments  []ghUserComment
}

type ghCode struct{ login, challenge, redirect string }

func newGHOAuthFake(t *testing.T) *ghOAuthFake {
	t.Helper()
	g := &ghOAuthFake{clientID: "Iv1.8a61f9b3a7aba766", clientSecret: "gh-client-secret-9f8e7d",
		codes: map[string]ghCode{}, access: map[string]string{}, refresh: map[string]string{}, pair: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", g.authorize)
	mux.HandleFunc("POST /login/oauth/access_token", g.token)
	mux.HandleFunc("GET /api/v3/user", g.user)
	// Issues and comments, for GitHub tools acting as a person
	// (githubactsas_test.go).
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/issues/{number}", g.getIssue)
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/issues/{number}/comments", g.listComments)
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/issues/{number}/comments", g.createComment)
	g.srv = httptest.NewServer(mux)
	t.Cleanup(g.srv.Close)
	return g
}

// authorize approves as the login the test names (GitHub's login
// parameter) and redirects back with a code, as GitHub does.
func (g *ghOAuthFake) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != g.clientID || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
		http.Error(w, "bad authorize request", http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.n++
	code := fmt.Sprintf("code%d", g.n)
	g.codes[code] = ghCode{login: q.Get("login"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	g.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (g *ghOAuthFake) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("client_id") != g.clientID || r.PostForm.Get("client_secret") != g.clientSecret {
		ghJSON(w, map[string]any{"error": "incorrect_client_credentials"})
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var login string
	switch r.PostForm.Get("grant_type") {
	case "refresh_token":
		old := r.PostForm.Get("refresh_token")
		var ok bool
		if login, ok = g.refresh[old]; !ok {
			ghJSON(w, map[string]any{"error": "bad_refresh_token", "error_description": "The refresh token passed is incorrect or expired."})
			return
		}
		// A used refresh token and its access token stop working.
		delete(g.refresh, old)
		delete(g.access, g.pair[old])
		g.refreshes++
	default: // GitHub's code exchange names no grant_type
		c, ok := g.codes[r.PostForm.Get("code")]
		delete(g.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || c.challenge != base64.RawURLEncoding.EncodeToString(sum[:]) || c.redirect != r.PostForm.Get("redirect_uri") {
			ghJSON(w, map[string]any{"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."})
			return
		}
		login = c.login
	}
	g.n++
	at, rt := fmt.Sprintf("ghu_%s%d", login, g.n), fmt.Sprintf("ghr_%s%d", login, g.n)
	g.access[at], g.refresh[rt], g.pair[rt] = login, login, at
	ghJSON(w, map[string]any{"access_token": at, "expires_in": 28800, "refresh_token": rt,
		"refresh_token_expires_in": 15897600, "scope": "", "token_type": "bearer"})
}

func (g *ghOAuthFake) user(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g.mu.Lock()
	login, ok := g.access[tok]
	if ok {
		g.userCalls = append(g.userCalls, login)
	}
	g.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		ghJSON(w, map[string]any{"message": "Bad credentials"})
		return
	}
	ghJSON(w, map[string]any{"login": login, "id": 1, "type": "User"})
}

// revokeAll drops every grant, as a person revoking the app does.
func (g *ghOAuthFake) revokeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.access, g.refresh = map[string]string{}, map[string]string{}
}

func (g *ghOAuthFake) counts() (refreshes int, calls []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refreshes, append([]string(nil), g.userCalls...)
}

func ghJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
