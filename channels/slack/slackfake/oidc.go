package slackfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// AuthorizePath is the fake's Sign in with Slack authorization page, as
// https://slack.com/openid/connect/authorize.
const AuthorizePath = "/openid/connect/authorize"

// Issuer is the iss of the id tokens the fake signs, Slack's own.
const Issuer = "https://slack.com"

// OIDCUser is the person the fake's authorization page signs in, as if
// they had clicked "Allow".
type OIDCUser struct {
	UserID, TeamID, Name string
}

// oidc is the fake's Sign in with Slack state.
type oidc struct {
	clientID, clientSecret string
	user                   OIDCUser
	key                    *rsa.PrivateKey
	codes                  map[string]oidcCode // issued, not yet exchanged
}

type oidcCode struct {
	redirectURI, nonce string
}

// EnableOIDC turns on Sign in with Slack for one app client: the
// authorization page at AuthorizePath (it redirects straight back with a
// code, signing in user), and the openid.connect.token method, which
// exchanges a code once for an access token and an RS256-signed id_token
// carrying Slack's claims.
func (s *Server) EnableOIDC(clientID, clientSecret string, user OIDCUser) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err) // the system's randomness failed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oidc = &oidc{clientID: clientID, clientSecret: clientSecret, user: user, key: key, codes: map[string]oidcCode{}}
}

// SetOIDCUser makes the authorization page sign in u from now on (another
// person at the same browser), keeping the client and its signing key.
func (s *Server) SetOIDCUser(u OIDCUser) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oidc == nil {
		panic("slackfake: SetOIDCUser before EnableOIDC")
	}
	o := *s.oidc // a copy: a request under way keeps the one it read
	o.user = u
	s.oidc = &o
}

// authorize answers the authorization page the way Slack does for a
// person who allows the app: a redirect to redirect_uri with code and
// state. Invalid requests get a 400 page, as Slack shows an error.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	o := s.oidc
	s.calls = append(s.calls, Call{Method: "openid.connect.authorize", Params: q, Status: http.StatusFound})
	s.mu.Unlock()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case o == nil:
		http.Error(w, "sign in with slack is not enabled", http.StatusBadRequest)
		return
	case q.Get("client_id") != o.clientID:
		http.Error(w, "invalid_client_id", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code":
		http.Error(w, "unsupported_response_type", http.StatusBadRequest)
		return
	case !strings.Contains(" "+q.Get("scope")+" ", " openid "):
		http.Error(w, "invalid_scope: openid is required", http.StatusBadRequest)
		return
	case err != nil || redirect.Host == "" || q.Get("state") == "":
		http.Error(w, "bad_redirect_uri or missing state", http.StatusBadRequest)
		return
	}
	code := newCode()
	s.mu.Lock()
	o.codes[code] = oidcCode{redirectURI: q.Get("redirect_uri"), nonce: q.Get("nonce")}
	s.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// tokenLocked is openid.connect.token.
func (s *Server) tokenLocked(p url.Values) map[string]any {
	o := s.oidc
	if o == nil {
		return apiError("unknown_method")
	}
	if p.Get("client_id") != o.clientID || p.Get("client_secret") != o.clientSecret {
		return apiError("invalid_client_id")
	}
	c, ok := o.codes[p.Get("code")]
	delete(o.codes, p.Get("code")) // single use, whatever the outcome
	if !ok {
		return apiError("invalid_code")
	}
	if p.Get("redirect_uri") != c.redirectURI {
		return apiError("bad_redirect_uri")
	}
	now := time.Now()
	claims := map[string]any{
		"iss": Issuer, "sub": o.user.UserID, "aud": o.clientID,
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "auth_time": now.Unix(),
		"nonce": c.nonce, "at_hash": "fake",
		"https://slack.com/user_id": o.user.UserID, "https://slack.com/team_id": o.user.TeamID,
		"name": o.user.Name, "https://slack.com/team_name": "Fake",
	}
	token, err := signJWT(o.key, claims)
	if err != nil {
		return apiError("internal_error")
	}
	return map[string]any{"ok": true, "access_token": "xoxp-fake-" + newCode(), "token_type": "Bearer", "id_token": token}
}

func signJWT(key *rsa.PrivateKey, claims map[string]any) (string, error) {
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "fake"})
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func newCode() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
