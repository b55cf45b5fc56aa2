package mcp

import (
	"errors"
	"net/http"

	"brain/internal/oauthclient"
)

// OAuth authorizes a streamable HTTP server's requests with OAuth 2.1 (the
// MCP authorization spec): config `auth: oauth`. The bridge sends the
// holder's token, refreshes it, and steps up scopes; a missing, revoked
// or insufficient token fails the request before the server acts, with an
// error that says to connect.
type OAuth struct {
	// Client is brain's OAuth client (redirect URL, client ID metadata
	// document, pre-registered client, registrations kept in the store).
	Client *oauthclient.Client
	// Tokens is the holder's token: the workspace's connection to the
	// server.
	Tokens oauthclient.Tokens
	// Authorize runs an authorization inline (tests, the conformance
	// adapter); nil in the daemon, where a person connects through
	// brain's connect link instead.
	Authorize oauthclient.Authorizer
}

// oauthClient wraps an HTTP client's transport in the server's OAuth
// transport, when the server has OAuth. The wrapper is per connection;
// the tokens are the server's.
func (s *server) oauthClient(hc *http.Client) {
	o := s.cfg.OAuth
	if o == nil {
		return
	}
	hc.Transport = &oauthclient.Transport{Base: hc.Transport, Client: o.Client, ServerURL: s.cfg.URL,
		Tokens: o.Tokens, Authorize: o.Authorize}
}

func (o *OAuth) validate() error {
	if o.Client == nil || o.Tokens == nil {
		return errors.New("oauth needs a client and a token holder")
	}
	return nil
}

// needsConnection reports an error that means the server needs an OAuth
// connection (missing, revoked, or short of scope); the server did nothing.
func needsConnection(err error) bool {
	var need *oauthclient.AuthorizationRequiredError
	return errors.As(err, &need)
}

// Reconnect asks the bridge to connect the server again soon (it was
// just connected to an account), even within the wait after a failed
// attempt. An unknown id is ignored.
func (b *Bridge) Reconnect(id string) {
	for _, s := range b.servers {
		if s.cfg.ID == id {
			s.forced.Store(true)
			s.poke()
		}
	}
}
