package connect

import (
	"context"
	"strings"

	"brain/internal/oauthclient"
)

// Endpoints is an OAuth 2.0 authorization server configured by hand
// rather than discovered: GitHub's web flow for GitHub Apps, a tools.http
// tool's provider. The client id and secret are the provider's Client's.
type Endpoints struct {
	// Issuer names the server in logs and errors (not checked against an
	// iss parameter unless the server sends one).
	Issuer       string
	AuthorizeURL string
	TokenURL     string
	Scopes       []string
}

// discovery is what Discover would have found.
func (e *Endpoints) discovery() oauthclient.Discovery {
	return oauthclient.Discovery{Server: oauthclient.ServerMetadata{
		Issuer:                e.Issuer,
		AuthorizationEndpoint: e.AuthorizeURL,
		TokenEndpoint:         e.TokenURL,
		// PKCE S256 is always sent; a server that ignores it (a plain
		// OAuth 2.0 one) still works, one that checks it is protected.
		CodeChallengeMethodsSupported: []string{"S256"},
		// The secret goes in the form: GitHub and most hand-configured
		// servers accept it there.
		TokenEndpointAuthMethodsSupported: []string{oauthclient.AuthPost},
	}}
}

// discover finds p's authorization server and the scope to ask for.
func (p Provider) discover(ctx context.Context) (oauthclient.Discovery, string, error) {
	if p.Endpoints != nil {
		return p.Endpoints.discovery(), strings.Join(p.Endpoints.Scopes, " "), nil
	}
	d, err := p.Client.Discover(ctx, p.ServerURL, oauthclient.Challenge{})
	if err != nil {
		return oauthclient.Discovery{}, "", err
	}
	return d, oauthclient.Scope(d), nil
}

// grant is what p's token endpoint needs to refresh a token.
func (p Provider) grant(ctx context.Context) (oauthclient.Grant, error) {
	d, _, err := p.discover(ctx)
	if err != nil {
		return oauthclient.Grant{}, err
	}
	reg, err := p.Client.Register(ctx, d.Server)
	if err != nil {
		return oauthclient.Grant{}, err
	}
	return oauthclient.Grant{Issuer: d.Server.Issuer, TokenEndpoint: d.Server.TokenEndpoint, ClientID: reg.ClientID,
		Method: reg.Method, Resource: d.Resource.Resource}, nil
}
