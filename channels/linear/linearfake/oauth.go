package linearfake

import (
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Organization is a Linear workspace the fake knows, with the app's user
// in it.
type Organization struct {
	ID, Name, URLKey   string
	AppUserID, AppName string
}

// grant is one issued access token or refresh token.
type grant struct {
	org     string
	expires time.Time // access tokens only
	used    bool      // refresh tokens: spent by a refresh
	revoked bool
}

// oauth is the fake's OAuth application state, guarded by Server.mu.
type oauth struct {
	clientID, clientSecret string
	expiresIn              time.Duration
	now                    func() time.Time
	orgs                   map[string]Organization
	installOrg             string
	deny                   bool
	codes                  map[string]code
	access                 map[string]*grant
	refresh                map[string]*grant
	refreshes              map[string]int // by organization
	counter                int
}

type code struct{ org, redirectURI string }

// EnableOAuth makes the fake an OAuth application with those credentials:
// it serves GET /oauth/authorize (answering at once, as if the person
// consented, with a redirect carrying a code) and POST /oauth/token
// (authorization_code and refresh_token grants), issuing access tokens
// that expire after expiresIn and refresh tokens that rotate: one that was
// used once is refused with invalid_grant, as Linear does. GraphQL answers
// an expired access token with AUTHENTICATION_ERROR (HTTP 401).
func (s *Server) EnableOAuth(clientID, clientSecret string, expiresIn time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.clientID, s.oauth.clientSecret, s.oauth.expiresIn = clientID, clientSecret, expiresIn
}

// SetClock sets the fake's clock for token expiry (default time.Now).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.now = now
}

// AddOrganization adds a workspace; the first one added is the one the
// authorize page installs into until SetInstallOrganization says another.
func (s *Server) AddOrganization(o Organization) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.orgs[o.ID] = o
	if s.oauth.installOrg == "" {
		s.oauth.installOrg = o.ID
	}
}

// SetInstallOrganization picks the workspace the authorize page installs
// into.
func (s *Server) SetInstallOrganization(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.installOrg = id
}

// DenyConsent makes the authorize page answer as if the person clicked
// Cancel (error=access_denied).
func (s *Server) DenyConsent(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.deny = deny
}

// RevokeTokens revokes every token of a workspace, as uninstalling the
// app does: access tokens stop working, refresh tokens are refused.
func (s *Server) RevokeTokens(org string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range []map[string]*grant{s.oauth.access, s.oauth.refresh} {
		for _, g := range m {
			if g.org == org {
				g.revoked = true
			}
		}
	}
}

// Refreshes is how many refresh_token grants the workspace was issued.
func (s *Server) Refreshes(org string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauth.refreshes[org]
}

// AuthorizeURL is the fake's authorize page; TokenURL its token endpoint.
func (s *Server) AuthorizeURL() string { return s.srv.URL + "/oauth/authorize" }

// TokenURL is the fake's token endpoint.
func (s *Server) TokenURL() string { return s.srv.URL + "/oauth/token" }

func (s *Server) clock() time.Time {
	if s.oauth.now != nil {
		return s.oauth.now()
	}
	return time.Now()
}

// serveAuthorize checks the install request and redirects back with a
// code (or the person's refusal).
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	o := &s.oauth
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case o.clientID == "" || q.Get("client_id") != o.clientID:
		s.mu.Unlock()
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case err != nil || !redirect.IsAbs():
		s.mu.Unlock()
		http.Error(w, "redirect_uri must be an absolute URL", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("state") == "":
		s.mu.Unlock()
		http.Error(w, "response_type=code and state are required", http.StatusBadRequest)
		return
	}
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	if o.deny {
		back.Set("error", "access_denied")
	} else {
		o.counter++
		c := "code-" + strconv.Itoa(o.counter)
		o.codes[c] = code{org: o.installOrg, redirectURI: q.Get("redirect_uri")}
		back.Set("code", c)
	}
	s.mu.Unlock()
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// serveToken answers the two grants brain uses.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "form body expected")
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &s.oauth
	if o.clientID == "" || f.Get("client_id") != o.clientID || f.Get("client_secret") != o.clientSecret {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	var org string
	switch f.Get("grant_type") {
	case "authorization_code":
		c, ok := o.codes[f.Get("code")]
		delete(o.codes, f.Get("code"))
		if !ok || c.redirectURI != f.Get("redirect_uri") {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "authorization code is invalid, used or for another redirect_uri")
			return
		}
		org = c.org
	case "refresh_token":
		g := o.refresh[f.Get("refresh_token")]
		if g == nil || g.used || g.revoked {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "refresh token is invalid, revoked or already used")
			return
		}
		g.used = true
		org = g.org
		o.refreshes[org]++
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
		return
	}
	o.counter++
	n := strconv.Itoa(o.counter)
	access, refresh := "lin_oauth_access_"+org+"_"+n, "lin_oauth_refresh_"+org+"_"+n
	o.access[access] = &grant{org: org, expires: s.clock().Add(o.expiresIn)}
	o.refresh[refresh] = &grant{org: org}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": "Bearer", "expires_in": int(o.expiresIn / time.Second),
		"refresh_token": refresh, "scope": "read,write,app:assignable,app:mentionable",
	})
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

// organizationOf returns the workspace an OAuth access token belongs to,
// and whether it is valid now. Call with s.mu held.
func (s *Server) organizationOf(token string) (string, bool) {
	g := s.oauth.access[token]
	if g == nil || g.revoked || !s.clock().Before(g.expires) {
		return "", false
	}
	return g.org, true
}
