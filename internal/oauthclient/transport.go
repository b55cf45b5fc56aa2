package oauthclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Defaults of a Transport.
const (
	// DefaultMaxStepUps bounds re-authorizations for insufficient_scope
	// without a success in between (the MCP spec asks for a limit).
	DefaultMaxStepUps = 2
	// refreshSkew refreshes a token this long before it expires.
	refreshSkew = time.Minute
	// maxRequestBody caps a request body kept for a retry after 401/403.
	maxRequestBody = 32 << 20
)

// Tokens keeps one holder's token (a person's, or the workspace's).
// Implementations must be safe for concurrent use.
type Tokens interface {
	// Token returns the current token; ok is false when there is none
	// (never connected, or revoked).
	Token(ctx context.Context) (t Token, ok bool, err error)
	// Save stores the token of a new grant.
	Save(ctx context.Context, t Token) error
	// Rotate replaces old with refresh's result, once across processes:
	// an implementation shared by replicas holds a lease while refresh
	// runs and returns the winner's token when another process rotated
	// first. A refresh that fails with ErrRefused must leave the holder
	// without a token.
	Rotate(ctx context.Context, old Token, refresh func(context.Context, Token) (Token, error)) (Token, error)
}

// MemoryTokens keeps a token in memory.
type MemoryTokens struct {
	mu  sync.Mutex
	tok *Token
}

// Token implements Tokens.
func (m *MemoryTokens) Token(context.Context) (Token, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tok == nil {
		return Token{}, false, nil
	}
	return *m.tok, true, nil
}

// Save implements Tokens.
func (m *MemoryTokens) Save(_ context.Context, t Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tok = &t
	return nil
}

// Rotate implements Tokens.
func (m *MemoryTokens) Rotate(ctx context.Context, old Token, refresh func(context.Context, Token) (Token, error)) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tok == nil {
		return Token{}, ErrNoToken
	}
	if m.tok.AccessToken != old.AccessToken {
		return *m.tok, nil
	}
	next, err := refresh(ctx, old)
	if errors.Is(err, ErrRefused) {
		m.tok = nil
	}
	if err != nil {
		return Token{}, err
	}
	m.tok = &next
	return next, nil
}

// ErrNoToken is a holder without a token: someone must authorize.
var ErrNoToken = errors.New("not connected")

// AuthorizationRequiredError is a request the server refused without a
// usable token, when nobody can authorize inline (Transport.Authorize is
// nil): the holder must connect first. Nothing was done by the server.
type AuthorizationRequiredError struct {
	Scope string // the scope the server asked for, if it said
}

func (e *AuthorizationRequiredError) Error() string {
	return "the server needs an OAuth connection that is missing, revoked or lacks scope: connect the account, then retry"
}

// Authorizer sends a person to f.URL and returns the query of the
// redirect back to f.RedirectURL.
type Authorizer func(ctx context.Context, f Flow) (url.Values, error)

// Transport authorizes requests to one OAuth-protected server with one
// holder's token: it sends the token, refreshes it shortly before it
// expires and once on a 401, authorizes again (through Authorize) when
// there is no token or the server asks for more scope, and retries the
// request after each. A 401 or 403 means the server refused the request,
// so sending it again is not a second delivery.
type Transport struct {
	Base      http.RoundTripper // nil: http.DefaultTransport
	Client    *Client
	ServerURL string
	Tokens    Tokens
	// Authorize runs an authorization inline; nil turns every missing
	// token or scope into an AuthorizationRequiredError.
	Authorize Authorizer
	// MaxStepUps bounds insufficient_scope re-authorizations; 0 is
	// DefaultMaxStepUps.
	MaxStepUps int

	mu      sync.Mutex // one discovery or authorization at a time
	grant   *Grant
	stepUps int
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	tok, have, err := t.Tokens.Token(ctx)
	if err != nil {
		return nil, fmt.Errorf("oauth token: %w", err)
	}
	if have && tok.RefreshToken != "" && !tok.ExpiresAt.IsZero() && t.Client.now().Add(refreshSkew).After(tok.ExpiresAt) {
		if next, err := t.refresh(ctx, tok, Challenge{}); err == nil {
			tok = next
		} else if errors.Is(err, ErrRefused) {
			have = false
		}
		// Other refresh failures: try the old token; the server decides.
	}
	refreshed, authorized := false, false
	for {
		resp, err := t.send(req, body, tok, have)
		if err != nil {
			return nil, err
		}
		ch, _ := ParseChallenge(resp.Header.Values("WWW-Authenticate"))
		switch {
		case resp.StatusCode == http.StatusUnauthorized && !authorized:
			if have && tok.RefreshToken != "" && !refreshed {
				refreshed = true
				if next, err := t.refresh(ctx, tok, ch); err == nil {
					drain(resp)
					tok = next
					continue
				}
			}
			if t.Authorize == nil {
				drain(resp)
				return nil, &AuthorizationRequiredError{Scope: ch.Scope}
			}
			drain(resp)
			next, err := t.authorize(ctx, ch, "")
			if err != nil {
				return nil, err
			}
			tok, have, authorized = next, true, true
			continue
		case resp.StatusCode == http.StatusForbidden && ch.Error == "insufficient_scope":
			t.mu.Lock()
			over := t.stepUps >= t.maxStepUps()
			if !over {
				t.stepUps++
			}
			t.mu.Unlock()
			if over {
				return resp, nil
			}
			if t.Authorize == nil {
				drain(resp)
				return nil, &AuthorizationRequiredError{Scope: Union(tok.Scope, ch.Scope)}
			}
			drain(resp)
			// The union: a step-up must not lose what was granted before.
			next, err := t.authorize(ctx, ch, Union(tok.Scope, ch.Scope))
			if err != nil {
				return nil, err
			}
			tok, have = next, true
			continue
		case resp.StatusCode < 300:
			t.mu.Lock()
			t.stepUps = 0
			t.mu.Unlock()
		}
		return resp, nil
	}
}

func (t *Transport) maxStepUps() int {
	if t.MaxStepUps > 0 {
		return t.MaxStepUps
	}
	return DefaultMaxStepUps
}

func (t *Transport) send(req *http.Request, body []byte, tok Token, have bool) (*http.Response, error) {
	r := req.Clone(req.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	r.Header.Del("Authorization")
	if have {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(io.LimitReader(req.Body, maxRequestBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRequestBody {
		return nil, fmt.Errorf("request body over %d bytes", maxRequestBody)
	}
	return b, nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// refresh rotates tok through Tokens (once across processes).
func (t *Transport) refresh(ctx context.Context, tok Token, ch Challenge) (Token, error) {
	g, err := t.grantFor(ctx, ch)
	if err != nil {
		return Token{}, err
	}
	return t.Tokens.Rotate(ctx, tok, func(ctx context.Context, old Token) (Token, error) {
		return t.Client.Refresh(ctx, g, old.RefreshToken, old.Scope)
	})
}

// grantFor returns the grant of the last authorization, or discovers it
// (after a restart, a token from the store has none in memory).
func (t *Transport) grantFor(ctx context.Context, ch Challenge) (Grant, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.grant != nil {
		return *t.grant, nil
	}
	d, err := t.Client.Discover(ctx, t.ServerURL, ch)
	if err != nil {
		return Grant{}, err
	}
	reg, err := t.Client.Register(ctx, d.Server)
	if err != nil {
		return Grant{}, err
	}
	g := Grant{Issuer: d.Server.Issuer, TokenEndpoint: d.Server.TokenEndpoint, ClientID: reg.ClientID, Method: reg.Method, Resource: d.Resource.Resource}
	t.grant = &g
	return g, nil
}

// authorize discovers from the challenge (afresh: the authorization
// server may have changed) and runs a whole authorization.
func (t *Transport) authorize(ctx context.Context, ch Challenge, scope string) (Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, err := t.Client.Discover(ctx, t.ServerURL, ch)
	if err != nil {
		return Token{}, err
	}
	if scope == "" {
		scope = Scope(d)
	}
	f, err := t.Client.Start(ctx, d, scope)
	if err != nil {
		return Token{}, err
	}
	cb, err := t.Authorize(ctx, f)
	if err != nil {
		return Token{}, fmt.Errorf("authorize: %w", err)
	}
	tok, err := t.Client.Finish(ctx, f, cb)
	if err != nil {
		return Token{}, err
	}
	if err := t.Tokens.Save(ctx, tok); err != nil {
		return Token{}, fmt.Errorf("save token: %w", err)
	}
	g := f.Grant
	t.grant = &g
	return tok, nil
}
