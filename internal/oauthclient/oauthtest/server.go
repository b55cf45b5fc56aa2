// Package oauthtest is a fake OAuth 2.1 authorization server for tests:
// real authorization codes bound to their PKCE challenge, client and
// redirect, refresh tokens that rotate (a used one is refused, and its
// reuse revokes the grant), revocation, dynamic registration and RFC 8414
// metadata. Its authorization endpoint approves at once, as the person
// named by the login_hint query parameter (default "alice"), and
// redirects back with the iss parameter.
//
// It imports only the standard library.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Server is the fake authorization server.
type Server struct {
	*httptest.Server
	// ExpiresIn is the access tokens' lifetime in seconds; 0 is 3600.
	ExpiresIn int

	mu       sync.Mutex
	codes    map[string]code
	access   map[string]Grant
	refresh  map[string]string // refresh token -> grant id
	used     map[string]string // rotated-out refresh token -> grant id
	grants   map[string]*Grant
	clients  map[string]string // client id -> secret
	requests []string          // "METHOD path" of every request
	issued   []string          // every token and client secret handed out
	refreshN int
}

// Grant is what a token stands for.
type Grant struct {
	ID       string
	Subject  string
	ClientID string
	Scope    string
	Resource string
	Revoked  bool
}

type code struct {
	challenge, clientID, redirect, scope, resource, subject string
}

// New starts the server; Close stops it.
func New() *Server {
	s := &Server{codes: map[string]code{}, access: map[string]Grant{}, refresh: map[string]string{},
		used: map[string]string{}, grants: map[string]*Grant{}, clients: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("POST /revoke", s.revoke)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	return s
}

// Issuer is the server's issuer identifier.
func (s *Server) Issuer() string { return s.URL }

// AddClient pre-registers a client, as an admin registering brain at a
// provider by hand would (tools.http oauth, GitHub Apps): it then
// authorizes and redeems codes with that id and secret.
func (s *Server) AddClient(id, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[id] = secret
	s.issued = append(s.issued, secret)
}

// Check returns the grant an access token stands for; ok is false for an
// unknown, expired-by-rotation or revoked token.
func (s *Server) Check(token string) (Grant, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.access[token]
	if !ok || s.grants[g.ID].Revoked {
		return Grant{}, false
	}
	return g, true
}

// Refreshes counts refresh grants answered with a token.
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshN
}

// Secrets returns every access token, refresh token and client secret
// the server handed out, for tests that look for them where they must
// not be.
func (s *Server) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// Requests returns "METHOD path" of every request so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// RevokeSubject revokes every grant of a subject, as a person revoking
// brain's access at the provider would.
func (s *Server) RevokeSubject(subject string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.grants {
		if g.Subject == subject {
			g.Revoked = true
		}
	}
}

// ExpireAccess forgets every access token, as their expiry would: the
// next use of one gets 401 and only a refresh helps.
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]Grant{}
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         s.URL,
		"authorization_endpoint":                         s.URL + "/authorize",
		"token_endpoint":                                 s.URL + "/token",
		"registration_endpoint":                          s.URL + "/register",
		"revocation_endpoint":                            s.URL + "/revoke",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
		"scopes_supported":                               []string{"read", "write", "offline_access"},
		"authorization_response_iss_parameter_supported": true,
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id, secret := "client-"+token(8), token(16)
	s.mu.Lock()
	s.clients[id] = secret
	s.issued = append(s.issued, secret)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "client_secret": secret,
		"token_endpoint_auth_method": "client_secret_basic", "redirect_uris": req.RedirectURIs})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme == "" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	_, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	if !known {
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	}
	subject := q.Get("login_hint")
	if subject == "" {
		subject = "alice"
	}
	c := token(16)
	s.mu.Lock()
	s.codes[c] = code{challenge: q.Get("code_challenge"), clientID: q.Get("client_id"), redirect: q.Get("redirect_uri"),
		scope: q.Get("scope"), resource: q.Get("resource"), subject: subject}
	s.mu.Unlock()
	back := redirect.Query()
	back.Set("code", c)
	back.Set("state", q.Get("state"))
	back.Set("iss", s.URL)
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) client(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want, ok := s.clients[id]
	return id, ok && want == secret
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	clientID, ok := s.client(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var g *Grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		c, found := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code")) // single use
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !found || c.clientID != clientID || c.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || c.resource != r.PostForm.Get("resource") {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		g = &Grant{ID: token(8), Subject: c.subject, ClientID: clientID, Scope: c.scope, Resource: c.resource}
		s.grants[g.ID] = g
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		id, live := s.refresh[rt]
		if !live {
			if id, reused := s.used[rt]; reused {
				// A rotated-out token used again: the grant is revoked
				// (OAuth 2.1's refresh token reuse detection).
				s.grants[id].Revoked = true
			}
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		g = s.grants[id]
		if g.Revoked || g.ClientID != clientID {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, rt)
		s.used[rt] = id
		s.refreshN++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at, rt := "at-"+token(16), "rt-"+token(16)
	s.issued = append(s.issued, at, rt)
	s.access[at] = *g
	s.refresh[rt] = g.ID
	exp := s.ExpiresIn
	if exp == 0 {
		exp = 3600
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": exp,
		"refresh_token": rt, "scope": g.Scope})
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	tok := r.PostForm.Get("token")
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.refresh[tok]; ok {
		s.grants[id].Revoked = true
	}
	if g, ok := s.access[tok]; ok {
		s.grants[g.ID].Revoked = true
	}
	w.WriteHeader(http.StatusOK)
}

// Protect wraps h as a protected resource of this server at resource
// (its URL): requests without a valid token get 401 with a challenge
// naming the resource metadata, served at
// /.well-known/oauth-protected-resource/<path>. The grant reaches h via
// GrantHeader.
func (s *Server) Protect(resource string, h http.Handler) http.Handler {
	u, _ := url.Parse(resource)
	prmPath := "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == prmPath {
			writeJSON(w, http.StatusOK, map[string]any{"resource": resource, "authorization_servers": []string{s.URL},
				"scopes_supported": []string{"read"}})
			return
		}
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		g, ok := s.Check(tok)
		if !ok || g.Resource != resource {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+u.Scheme+"://"+u.Host+prmPath+`", scope="read"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
			return
		}
		r.Header.Set(GrantHeader, g.Subject)
		h.ServeHTTP(w, r)
	})
}

// GrantHeader carries, to a handler wrapped by Protect, the subject whose
// token authorized the request.
const GrantHeader = "X-Test-Subject"

// Hint adds login_hint to an authorization URL, so the fake approves as
// subject.
func Hint(authURL, subject string) string {
	u, err := url.Parse(authURL)
	if err != nil {
		return authURL
	}
	q := u.Query()
	q.Set("login_hint", subject)
	u.RawQuery = q.Encode()
	return u.String()
}

// Follow runs an authorization URL as a browser would, approving as
// subject, and returns the query of the redirect back.
func Follow(authURL, subject string) (url.Values, error) {
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(Hint(authURL, subject))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, err
	}
	return loc.Query(), nil
}

func token(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
