package connect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"brain/internal/oauthclient"
)

// RefreshMargin is how long before its expiry a token is refreshed when a
// tool asks for it (AccessToken) and by the refresh worker.
const RefreshMargin = 5 * time.Minute

// NotConnectedError says a person (or the workspace) has no usable
// connection to a provider: never connected, or revoked (Problem says
// why). Nothing was sent upstream; the caller offers a connect link.
type NotConnectedError struct {
	Provider string
	PersonID string // "" = the workspace
	Problem  string
}

func (e *NotConnectedError) Error() string {
	who := "the workspace"
	if e.PersonID != "" {
		who = e.PersonID
	}
	msg := fmt.Sprintf("%s has no %s connection: connect the account, then retry", who, e.Provider)
	if e.Problem != "" {
		msg += " (" + e.Problem + ")"
	}
	return msg
}

// AccessToken returns the access token of personID's connection ("" =
// the workspace's) to provider, refreshed first when it expires within
// RefreshMargin (one refresh across replicas: Tokens.Rotate). This is
// what a tool acting as a person calls (acts_as: requester | approver):
// the token goes on the request upstream and nowhere else. A missing or
// revoked connection, or one whose refresh the provider refused, is a
// *NotConnectedError.
func (s *Service) AccessToken(ctx context.Context, personID, provider string) (string, error) {
	p, t, tok, err := s.stored(ctx, personID, provider)
	if err != nil {
		return "", err
	}
	if tok.ExpiresAt.IsZero() || tok.ExpiresAt.Sub(s.Now()) > RefreshMargin {
		return tok.AccessToken, nil
	}
	next, _, err := s.rotate(ctx, p, t, tok)
	if errors.Is(err, oauthclient.ErrRefused) || errors.Is(err, oauthclient.ErrNoToken) {
		return "", s.notConnected(ctx, personID, provider)
	}
	if err != nil && tok.ExpiresAt.After(s.Now()) {
		// Not expired yet (another replica may hold the refresh): the
		// current token still works.
		return tok.AccessToken, nil
	}
	if err != nil {
		return "", fmt.Errorf("%s token: %w", provider, err)
	}
	return next.AccessToken, nil
}

// stored is the person's (or the workspace's) stored token for provider,
// with the provider and the Tokens that refresh it; a missing or revoked
// connection is a *NotConnectedError.
func (s *Service) stored(ctx context.Context, personID, provider string) (Provider, *Tokens, oauthclient.Token, error) {
	p, ok := s.Providers[provider]
	if !ok {
		return Provider{}, nil, oauthclient.Token{}, fmt.Errorf("no provider %q to connect", provider)
	}
	t := s.Tokens(personID, provider)
	tok, ok, err := t.Token(ctx)
	if err != nil {
		return Provider{}, nil, oauthclient.Token{}, fmt.Errorf("%s token: %w", provider, err)
	}
	if !ok {
		return Provider{}, nil, oauthclient.Token{}, s.notConnected(ctx, personID, provider)
	}
	return p, t, tok, nil
}

// rotate refreshes tok through t's lease and compare-and-swap; here
// says whether this process refreshed it (rather than finding it
// refreshed by another).
func (s *Service) rotate(ctx context.Context, p Provider, t *Tokens, tok oauthclient.Token) (next oauthclient.Token, here bool, err error) {
	if tok.RefreshToken == "" {
		return oauthclient.Token{}, false, errors.New("the token expires and came without a refresh token: connect again")
	}
	g, err := p.grant(ctx)
	if err != nil {
		return oauthclient.Token{}, false, err
	}
	next, err = t.Rotate(ctx, tok, func(ctx context.Context, cur oauthclient.Token) (oauthclient.Token, error) {
		got, err := p.Client.Refresh(ctx, g, cur.RefreshToken, cur.Scope)
		here = err == nil
		return got, err
	})
	return next, here && err == nil, err
}

func (s *Service) notConnected(ctx context.Context, personID, provider string) error {
	e := &NotConnectedError{Provider: provider, PersonID: personID}
	if c, err := s.Store.Connection(ctx, personID, provider); err == nil {
		e.Problem = c.Problem
	}
	return e
}
