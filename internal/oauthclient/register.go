package oauthclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Token endpoint authentication methods.
const (
	AuthBasic = "client_secret_basic"
	AuthPost  = "client_secret_post"
	AuthNone  = "none"
)

// Registration is a client registered at one authorization server.
// ClientSecret is a secret.
type Registration struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// Method is the token endpoint authentication method; empty means
	// chosen from the server's metadata and whether there is a secret.
	Method string
}

// Registrations keeps the clients registered dynamically, by issuer, so a
// restart does not register again. Implementations must be safe for
// concurrent use; a missing one is ok false.
type Registrations interface {
	Registration(ctx context.Context, issuer string) (r Registration, ok bool, err error)
	SaveRegistration(ctx context.Context, r Registration) error
}

// MemoryRegistrations keeps registrations in memory.
type MemoryRegistrations struct {
	mu sync.Mutex
	m  map[string]Registration
}

// Registration implements Registrations.
func (m *MemoryRegistrations) Registration(_ context.Context, issuer string) (Registration, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.m[issuer]
	return r, ok, nil
}

// SaveRegistration implements Registrations.
func (m *MemoryRegistrations) SaveRegistration(_ context.Context, r Registration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]Registration{}
	}
	m.m[r.Issuer] = r
	return nil
}

// Client is an OAuth client: how brain identifies itself to authorization
// servers. The zero value is not usable: RedirectURL is required.
type Client struct {
	// HTTP sends discovery, registration and token requests; nil is a
	// client with a 30s timeout that follows no redirects.
	HTTP *http.Client
	// RedirectURL is where authorization servers send the person back
	// (brain's /oauth/callback).
	RedirectURL string
	// ClientName is shown by authorization servers on their consent page.
	ClientName string

	// ClientID and ClientSecret are a pre-registered client: used at
	// every authorization server when set.
	ClientID     string
	ClientSecret string
	// MetadataURL is brain's client ID metadata document (an https URL):
	// the client id at servers that accept such documents.
	MetadataURL string
	// Registrations keeps dynamically registered clients; nil keeps them
	// in memory.
	Registrations Registrations

	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mem MemoryRegistrations
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) registrations() Registrations {
	if c.Registrations != nil {
		return c.Registrations
	}
	return &c.mem
}

// Register returns the client to use at the discovered authorization
// server: the pre-registered one, else brain's client ID metadata document
// when the server accepts those, else one registered there before, else a
// new dynamic registration (RFC 7591).
func (c *Client) Register(ctx context.Context, sm ServerMetadata) (Registration, error) {
	switch {
	case c.ClientID != "":
		return Registration{Issuer: sm.Issuer, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
			Method: chooseMethod(sm, c.ClientSecret != "")}, nil
	case c.MetadataURL != "" && sm.ClientIDMetadataDocumentSupported:
		return Registration{Issuer: sm.Issuer, ClientID: c.MetadataURL, Method: AuthNone}, nil
	}
	reg, ok, err := c.registrations().Registration(ctx, sm.Issuer)
	if err != nil {
		return Registration{}, fmt.Errorf("register: %w", err)
	}
	if ok {
		if reg.Method == "" {
			reg.Method = chooseMethod(sm, reg.ClientSecret != "")
		}
		return reg, nil
	}
	if sm.RegistrationEndpoint == "" {
		return Registration{}, fmt.Errorf("register: %s offers no dynamic client registration and no client id is configured (set the server's oauth client_id)", sm.Issuer)
	}
	reg, err = c.register(ctx, sm)
	if err != nil {
		return Registration{}, err
	}
	if err := c.registrations().SaveRegistration(ctx, reg); err != nil {
		return Registration{}, fmt.Errorf("register: save: %w", err)
	}
	return reg, nil
}

// chooseMethod picks the token endpoint authentication method the server
// lists (client_secret_basic when it lists none, RFC 8414's default).
func chooseMethod(sm ServerMetadata, secret bool) string {
	listed := sm.TokenEndpointAuthMethodsSupported
	if !secret {
		return AuthNone
	}
	for _, m := range []string{AuthBasic, AuthPost, AuthNone} {
		if slices.Contains(listed, m) {
			return m
		}
	}
	return AuthBasic
}

func (c *Client) register(ctx context.Context, sm ServerMetadata) (Registration, error) {
	method := AuthNone
	for _, m := range []string{AuthBasic, AuthPost} {
		if slices.Contains(sm.TokenEndpointAuthMethodsSupported, m) {
			method = m
			break
		}
	}
	if len(sm.TokenEndpointAuthMethodsSupported) == 0 {
		method = AuthBasic
	}
	name := c.ClientName
	if name == "" {
		name = "brain"
	}
	body, _ := json.Marshal(map[string]any{
		"client_name":                name,
		"redirect_uris":              []string{c.RedirectURL},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		// brain is a server-side application: its redirect is its own
		// public URL.
		"application_type": "web",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sm.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return Registration{}, fmt.Errorf("register: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return Registration{}, fmt.Errorf("register at %s: %w", sm.Issuer, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Registration{}, fmt.Errorf("register at %s: %w", sm.Issuer, err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return Registration{}, fmt.Errorf("register at %s: %w", sm.Issuer, oauthError(resp.StatusCode, raw))
	}
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.ClientID == "" {
		return Registration{}, fmt.Errorf("register at %s: the answer has no client_id", sm.Issuer)
	}
	reg := Registration{Issuer: sm.Issuer, ClientID: out.ClientID, ClientSecret: out.ClientSecret, Method: out.Method}
	if reg.Method == "" {
		reg.Method = chooseMethod(sm, reg.ClientSecret != "")
	}
	if reg.Method != AuthNone && reg.ClientSecret == "" {
		reg.Method = AuthNone
	}
	return reg, nil
}

// Error is an OAuth error response (RFC 6749 section 5.2).
type Error struct {
	Status      int
	Code        string // invalid_grant, invalid_client, ...
	Description string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("status %d", e.Status)
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += " (" + truncate(e.Description, 200) + ")"
	}
	return s
}

func oauthError(status int, body []byte) error {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &e)
	return &Error{Status: status, Code: e.Error, Description: e.Description}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ErrRefused is a refresh token the authorization server refused
// (invalid_grant): the grant is gone and the person must connect again.
var ErrRefused = errors.New("the authorization server refused the refresh token")

// isRefused reports an error that means the grant is gone.
func isRefused(err error) bool {
	var e *Error
	// bad_refresh_token is GitHub's invalid_grant for a refresh.
	return errors.As(err, &e) && (e.Code == "invalid_grant" || e.Code == "unauthorized_client" || e.Code == "bad_refresh_token")
}

// clientMetadataFor builds brain's client ID metadata document.
func clientMetadataFor(clientID, name, redirect string) map[string]any {
	return map[string]any{
		"client_id":                  clientID,
		"client_name":                name,
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": AuthNone,
		"application_type":           "web",
	}
}

// MetadataDocument is the JSON of brain's client ID metadata document, to
// serve at c.MetadataURL.
func (c *Client) MetadataDocument() []byte {
	name := c.ClientName
	if name == "" {
		name = "brain"
	}
	raw, _ := json.Marshal(clientMetadataFor(c.MetadataURL, name, c.RedirectURL))
	return raw
}

// formEncode is url.Values.Encode, kept for symmetry with Basic auth's
// encoding of id and secret (RFC 6749 2.3.1).
func formEncode(v url.Values) string { return v.Encode() }
