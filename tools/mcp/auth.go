package mcp

import (
	"errors"
	"net/http"

	"brain/internal/oauthclient"
	"brain/tools"
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
	// server. For a per-person server it is the token the tool list is
	// read with (see PerPerson); calls never use it.
	Tokens oauthclient.Tokens
	// Authorize runs an authorization inline (tests, the conformance
	// adapter); nil in the daemon, where a person connects through
	// brain's connect link instead.
	Authorize oauthclient.Authorizer

	// PerPerson (config per: person): each call is sent with the
	// connection of the person it acts as (ActsAs), in that person's own
	// MCP session (person.go); a call without one is refused with a
	// tools.ConnectionRequired before anything is sent.
	PerPerson bool
	// Provider names the connections ("mcp:<id>").
	Provider string
	// ActsAs picks the person: tools.ActsAsRequester (the default) or
	// tools.ActsAsApprover (in an approved call's apply).
	ActsAs string
	// People resolves a call's identity to a person.
	People tools.People
	// TokensFor is a person's connection to the server.
	TokensFor func(personID string) oauthclient.Tokens
}

// oauthClient wraps an HTTP client's transport in the server's OAuth
// transport, when the server has OAuth. The wrapper is per connection;
// the tokens are the server's.
func (s *server) oauthClient(hc *http.Client, tokens oauthclient.Tokens) {
	o := s.cfg.OAuth
	if o == nil {
		return
	}
	if tokens == nil {
		tokens = o.Tokens
	}
	hc.Transport = &oauthclient.Transport{Base: hc.Transport, Client: o.Client, ServerURL: s.cfg.URL,
		Tokens: tokens, Authorize: o.Authorize}
}

func (o *OAuth) validate() error {
	if o.Client == nil || o.Tokens == nil {
		return errors.New("oauth needs a client and a token holder")
	}
	if o.PerPerson && (o.People == nil || o.TokensFor == nil || o.Provider == "") {
		return errors.New("per-person oauth needs people, a provider name and each person's tokens")
	}
	if o.PerPerson && o.Authorize != nil {
		return errors.New("per-person oauth connects through brain's connect links, not inline")
	}
	switch o.ActsAs {
	case "", tools.ActsAsRequester, tools.ActsAsApprover:
	default:
		return errors.New("a per-person server acts as the requester or the approver")
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
