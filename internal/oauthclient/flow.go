package oauthclient

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OfflineAccess is the scope that asks for a refresh token where the
// authorization server lists it.
const OfflineAccess = "offline_access"

// Grant is what the token endpoint needs for one authorization server and
// resource. It holds no secret.
type Grant struct {
	Issuer        string `json:"issuer"`
	TokenEndpoint string `json:"token_endpoint"`
	ClientID      string `json:"client_id"`
	Method        string `json:"method"`
	Resource      string `json:"resource,omitempty"`
}

// Flow is an authorization in progress. Verifier and the client secret
// are secrets and are not part of its JSON: a caller that stores the flow
// keeps the verifier apart (sealed) and sets it back before Finish.
type Flow struct {
	Grant
	URL         string `json:"url"` // where to send the person
	State       string `json:"state"`
	Scope       string `json:"scope,omitempty"`
	RedirectURL string `json:"redirect_url"`
	ISSRequired bool   `json:"iss_required,omitempty"`
	Verifier    string `json:"-"`
}

// Token is an access token and what came with it. AccessToken and
// RefreshToken are secrets.
type Token struct {
	AccessToken  string
	RefreshToken string
	Scope        string    // as granted (or as requested, when the server did not say)
	ExpiresAt    time.Time // zero: not said
	// RefreshExpiresAt is when RefreshToken stops working (GitHub's
	// refresh_token_expires_in); zero: not said.
	RefreshExpiresAt time.Time
}

// Scope picks the scope to request (the MCP spec's scope selection): the
// challenge's, else the protected resource's scopes_supported, else none;
// offline_access is added when the authorization server lists it.
func Scope(d Discovery) string {
	var scopes []string
	switch {
	case d.Challenge.Scope != "":
		scopes = strings.Fields(d.Challenge.Scope)
	case len(d.Resource.ScopesSupported) > 0:
		scopes = slices.Clone(d.Resource.ScopesSupported)
	}
	if len(scopes) > 0 && slices.Contains(d.Server.ScopesSupported, OfflineAccess) && !slices.Contains(scopes, OfflineAccess) {
		scopes = append(scopes, OfflineAccess)
	}
	return strings.Join(scopes, " ")
}

// Union is the scopes of a and b, a's first, each once.
func Union(a, b string) string {
	out := strings.Fields(a)
	for _, s := range strings.Fields(b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// Start begins an authorization: it registers (or reuses) the client,
// makes the PKCE verifier and the state, and builds the URL to send the
// person to, with the resource indicator and scope.
func (c *Client) Start(ctx context.Context, d Discovery, scope string) (Flow, error) {
	if c.RedirectURL == "" {
		return Flow{}, errors.New("authorize: no redirect url (set public_url)")
	}
	if !slices.Contains(d.Server.CodeChallengeMethodsSupported, "S256") {
		// The MCP spec: refuse an authorization server that does not
		// say it supports PKCE S256.
		return Flow{}, fmt.Errorf("authorize: %s does not advertise PKCE S256: refusing it", d.Server.Issuer)
	}
	reg, err := c.Register(ctx, d.Server)
	if err != nil {
		return Flow{}, err
	}
	verifier, err := random()
	if err != nil {
		return Flow{}, err
	}
	state, err := random()
	if err != nil {
		return Flow{}, err
	}
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {reg.ClientID},
		"redirect_uri":          {c.RedirectURL},
		"state":                 {state},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
	}
	if d.Resource.Resource != "" {
		// Exactly as published: no normalisation (RFC 8707, RFC 9728).
		q.Set("resource", d.Resource.Resource)
	}
	if scope != "" {
		q.Set("scope", scope)
	}
	authURL, err := url.Parse(d.Server.AuthorizationEndpoint)
	if err != nil {
		return Flow{}, fmt.Errorf("authorize: invalid authorization endpoint")
	}
	for k, vs := range authURL.Query() {
		if _, ours := q[k]; !ours {
			q[k] = vs
		}
	}
	authURL.RawQuery = q.Encode()
	return Flow{
		Grant: Grant{Issuer: d.Server.Issuer, TokenEndpoint: d.Server.TokenEndpoint, ClientID: reg.ClientID,
			Method: reg.Method, Resource: d.Resource.Resource},
		URL: authURL.String(), State: state, Scope: scope, RedirectURL: c.RedirectURL,
		ISSRequired: d.Server.ISSParameterSupported, Verifier: verifier,
	}, nil
}

func random() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Finish completes an authorization from the callback's query: it checks
// the state and the iss parameter (RFC 9207: present and exact when the
// server advertised it; exact whenever present), then redeems the code
// with the PKCE verifier.
func (c *Client) Finish(ctx context.Context, f Flow, callback url.Values) (Token, error) {
	if subtle.ConstantTimeCompare([]byte(callback.Get("state")), []byte(f.State)) != 1 {
		return Token{}, errors.New("authorize: the state does not match this authorization")
	}
	iss, hasISS := callback["iss"]
	switch {
	case hasISS && (len(iss) != 1 || iss[0] != f.Issuer):
		return Token{}, fmt.Errorf("authorize: the response came from issuer %q, not %q: refusing it", callback.Get("iss"), f.Issuer)
	case !hasISS && f.ISSRequired:
		return Token{}, fmt.Errorf("authorize: %s advertises the iss parameter but the response has none: refusing it", f.Issuer)
	}
	if e := callback.Get("error"); e != "" {
		return Token{}, fmt.Errorf("authorize: the authorization server answered %s", truncate(e, 64))
	}
	code := callback.Get("code")
	if code == "" {
		return Token{}, errors.New("authorize: the response has no code")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {f.RedirectURL},
		"code_verifier": {f.Verifier},
	}
	return c.token(ctx, f.Grant, form, f.Scope)
}

// Refresh redeems a refresh token. A refused one is ErrRefused (wrapped).
// The answer may rotate the refresh token; when it has none, the old one
// stays valid and is kept.
func (c *Client) Refresh(ctx context.Context, g Grant, refreshToken, scope string) (Token, error) {
	if refreshToken == "" {
		return Token{}, errors.New("refresh: no refresh token")
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}
	tok, err := c.token(ctx, g, form, scope)
	if err != nil {
		if isRefused(err) {
			return Token{}, fmt.Errorf("%w: %v", ErrRefused, err)
		}
		return Token{}, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = refreshToken
	}
	return tok, nil
}

func (c *Client) token(ctx context.Context, g Grant, form url.Values, scope string) (Token, error) {
	if g.Resource != "" {
		form.Set("resource", g.Resource)
	}
	secret, err := c.secret(ctx, g)
	if err != nil {
		return Token{}, err
	}
	switch g.Method {
	case AuthPost:
		form.Set("client_id", g.ClientID)
		form.Set("client_secret", secret)
	case AuthBasic:
	default:
		form.Set("client_id", g.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.TokenEndpoint, strings.NewReader(formEncode(form)))
	if err != nil {
		return Token{}, fmt.Errorf("token: invalid token endpoint")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if g.Method == AuthBasic {
		req.SetBasicAuth(url.QueryEscape(g.ClientID), url.QueryEscape(secret))
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return Token{}, fmt.Errorf("token request to %s: %w", g.Issuer, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Token{}, fmt.Errorf("token request to %s: %w", g.Issuer, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Token{}, fmt.Errorf("token request to %s: %w", g.Issuer, oauthError(resp.StatusCode, raw))
	}
	var out struct {
		Error        string          `json:"error"`
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		RefreshToken string          `json:"refresh_token"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
		Scope        string          `json:"scope"`
		// GitHub App user tokens: how long the refresh token lasts.
		RefreshExpiresIn json.RawMessage `json:"refresh_token_expires_in"`
	}
	if err := json.Unmarshal(raw, &out); err == nil && out.Error != "" {
		// GitHub answers token errors with 200 and an error body.
		return Token{}, fmt.Errorf("token request to %s: %w", g.Issuer, oauthError(resp.StatusCode, raw))
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.AccessToken == "" {
		return Token{}, fmt.Errorf("token request to %s: the answer has no access_token", g.Issuer)
	}
	if !strings.EqualFold(out.TokenType, "bearer") {
		return Token{}, fmt.Errorf("token request to %s: token type %q is not Bearer", g.Issuer, truncate(out.TokenType, 32))
	}
	tok := Token{AccessToken: out.AccessToken, RefreshToken: out.RefreshToken, Scope: out.Scope}
	if tok.Scope == "" {
		tok.Scope = scope
	}
	if secs, ok := seconds(out.ExpiresIn); ok && secs > 0 {
		tok.ExpiresAt = c.now().Add(time.Duration(secs) * time.Second)
	}
	if secs, ok := seconds(out.RefreshExpiresIn); ok && secs > 0 && tok.RefreshToken != "" {
		tok.RefreshExpiresAt = c.now().Add(time.Duration(secs) * time.Second)
	}
	return tok, nil
}

// seconds reads expires_in, a number (some servers send a string).
func seconds(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var n json.Number
	s := strings.Trim(string(raw), `"`)
	n = json.Number(s)
	v, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			return 0, false
		}
		v = int64(f)
	}
	return v, true
}

// secret finds the client secret of a grant: the pre-registered one, or
// the registration's; none for public clients.
func (c *Client) secret(ctx context.Context, g Grant) (string, error) {
	if g.Method == AuthNone || g.Method == "" {
		return "", nil
	}
	if c.ClientID != "" && c.ClientID == g.ClientID {
		return c.ClientSecret, nil
	}
	reg, ok, err := c.registrations().Registration(ctx, g.Issuer)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if !ok || reg.ClientID != g.ClientID {
		return "", fmt.Errorf("token: the client registered at %s is gone: connect again", g.Issuer)
	}
	return reg.ClientSecret, nil
}
