package connect

import (
	"context"
	"errors"
	"fmt"

	"brain/internal/oauthclient"
)

// Refreshed is the access token to use after the provider's API refused
// stale (HTTP 401): the stored token when another request or replica
// replaced stale already, else a refresh (one across replicas,
// Tokens.Rotate), whatever the recorded expiry says, since the API is
// the one that knows. A connection that is gone, whose refresh the
// provider refused, or that has no refresh token is a
// *NotConnectedError: the person must connect again.
func (s *Service) Refreshed(ctx context.Context, personID, provider, stale string) (string, error) {
	p, t, tok, err := s.stored(ctx, personID, provider)
	if err != nil {
		return "", err
	}
	if tok.AccessToken != stale {
		return tok.AccessToken, nil
	}
	if tok.RefreshToken == "" {
		return "", &NotConnectedError{Provider: provider, PersonID: personID,
			Problem: "the service refused the token, and it came without a refresh token"}
	}
	next, _, err := s.rotate(ctx, p, t, tok)
	if errors.Is(err, oauthclient.ErrRefused) || errors.Is(err, oauthclient.ErrNoToken) {
		return "", s.notConnected(ctx, personID, provider)
	}
	if err != nil {
		return "", fmt.Errorf("%s token: %w", provider, err)
	}
	return next.AccessToken, nil
}
