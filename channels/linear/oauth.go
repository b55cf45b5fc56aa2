package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"brain/tools"
)

// InstallScopes are the scopes brain asks a workspace for: reading and
// writing issues and comments, and being delegated and mentioned as an
// agent (actor=app).
const InstallScopes = "read,write,app:assignable,app:mentionable"

// ErrGrantRefused is a token request Linear refused for good (the refresh
// token was revoked, already used, or the app was uninstalled): the
// workspace must install the app again.
var ErrGrantRefused = errors.New("linear refused the grant")

// OAuth is Linear's OAuth 2.0 token endpoint for one application.
type OAuth struct {
	ClientID     string
	ClientSecret string // never logged
	TokenURL     string
	HTTP         *http.Client // nil: a client with a 15 s timeout
}

// Grant is what the token endpoint issues. Access and refresh tokens are
// secrets.
type Grant struct {
	AccessToken  string
	RefreshToken string
	// ExpiresIn is the access token's lifetime; 0 when Linear did not say.
	ExpiresIn time.Duration
	Scope     string
}

// AuthorizeURL is the page a person opens to install the app: base is
// Linear's authorize endpoint, redirectURI brain's callback, state the
// single-use value the callback checks.
func AuthorizeURL(base, clientID, redirectURI, state string) string {
	q := url.Values{}
	q.Set("client_id", clientID)
	q.Set("redirect_uri", redirectURI)
	q.Set("response_type", "code")
	q.Set("scope", InstallScopes)
	q.Set("state", state)
	q.Set("actor", "app")
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + q.Encode()
}

// Exchange trades an authorization code for a grant.
func (o OAuth) Exchange(ctx context.Context, code, redirectURI string) (Grant, error) {
	return o.token(ctx, "exchange linear code", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
	}, code)
}

// Refresh trades a refresh token for a new grant. Linear rotates refresh
// tokens: the one passed stops working, so store the new one before using
// it. The call is made once, never retried: a retry would spend the
// rotated token twice.
func (o OAuth) Refresh(ctx context.Context, refreshToken string) (Grant, error) {
	return o.token(ctx, "refresh linear token", url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {refreshToken},
	}, refreshToken)
}

// token posts one form-encoded token request. secret (the code or refresh
// token sent) is scrubbed from whatever Linear answers, with the client
// secret, before it reaches an error.
func (o OAuth) token(ctx context.Context, op string, form url.Values, secret string) (Grant, error) {
	form.Set("client_id", o.ClientID)
	form.Set("client_secret", o.ClientSecret)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return Grant{}, fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	resp, err := hc.Do(req)
	if err != nil {
		// url.Error names the URL only, never the form.
		return Grant{}, fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return Grant{}, fmt.Errorf("%s: read response: %w", op, err)
	}
	var body struct {
		AccessToken      string  `json:"access_token"`
		RefreshToken     string  `json:"refresh_token"`
		ExpiresIn        float64 `json:"expires_in"`
		Scope            any     `json:"scope"` // a string, or a list
		Error            string  `json:"error"`
		ErrorDescription string  `json:"error_description"`
	}
	decoded := json.Unmarshal(raw, &body) == nil
	if resp.StatusCode/100 != 2 || body.Error != "" || !decoded || body.AccessToken == "" {
		scrub := tools.NewScrubber(secret, o.ClientSecret, body.AccessToken, body.RefreshToken)
		msg := scrub.String(firstNonEmpty(body.ErrorDescription, body.Error, http.StatusText(resp.StatusCode)))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		err := fmt.Errorf("%s: %s (HTTP %d)", op, msg, resp.StatusCode)
		if body.Error == "invalid_grant" || (body.Error == "" && resp.StatusCode == http.StatusUnauthorized) {
			err = fmt.Errorf("%w: %w", ErrGrantRefused, err)
		}
		return Grant{}, err
	}
	g := Grant{AccessToken: body.AccessToken, RefreshToken: body.RefreshToken, ExpiresIn: time.Duration(body.ExpiresIn * float64(time.Second))}
	switch s := body.Scope.(type) {
	case string:
		g.Scope = s
	case []any:
		parts := make([]string, 0, len(s))
		for _, p := range s {
			parts = append(parts, fmt.Sprint(p))
		}
		g.Scope = strings.Join(parts, ",")
	}
	return g, nil
}

// Viewer is who a token acts as: the app's user and its workspace.
type Viewer struct {
	UserID           string
	UserName         string
	OrganizationID   string
	OrganizationName string
	URLKey           string
}

const viewerQuery = `query Viewer {
  viewer { id name }
  organization { id name urlKey }
}`

// Viewer asks Linear who the client's token belongs to.
func (c *Client) Viewer(ctx context.Context) (Viewer, error) {
	data, err := c.query(ctx, "viewer", viewerQuery, nil)
	if err != nil {
		return Viewer{}, err
	}
	var u struct{ ID, Name string }
	var o struct {
		ID, Name string
		URLKey   string `json:"urlKey"`
	}
	if json.Unmarshal(data["viewer"], &u) != nil || json.Unmarshal(data["organization"], &o) != nil || o.ID == "" {
		return Viewer{}, &APIError{Op: "viewer", Status: http.StatusOK, Message: "no viewer or organization in the answer"}
	}
	return Viewer{UserID: u.ID, UserName: u.Name, OrganizationID: o.ID, OrganizationName: o.Name, URLKey: o.URLKey}, nil
}
