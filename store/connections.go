package store

import (
	"context"
	"time"
)

// Connection states.
const (
	// ConnectionConnected: the tokens work, or can be refreshed.
	ConnectionConnected = "connected"
	// ConnectionRevoked: the person or an admin revoked it, or the
	// provider refused its refresh token; the person must connect again.
	ConnectionRevoked = "revoked"
)

// Connection is an account a person connected through OAuth (a GitHub
// user, an MCP server's user), or, with PersonID "", the workspace's own
// connection to a provider. AccessToken and RefreshToken are secrets:
// never log them, put them in errors or show them; only their existence,
// Scope and ExpiresAt are shown.
type Connection struct {
	ID       string
	PersonID string
	// Provider names what was connected: "github", "mcp:<server id>",
	// "http:<tool name>".
	Provider     string
	Account      string // the upstream account, as the provider names it
	AccessToken  string
	RefreshToken string
	Scope        string
	ExpiresAt    time.Time // zero = never said
	// RefreshExpiresAt is when the refresh token stops working (GitHub's
	// refresh_token_expires_in); zero = never said.
	RefreshExpiresAt time.Time
	Status           string // ConnectionConnected or ConnectionRevoked
	Problem          string // why it is revoked, fit to show (no secrets)
	// ServiceAccount marks a connection schedules may use: a person's
	// connection an admin marked (MarkServiceAccount) as the provider's
	// account for unattended work.
	ServiceAccount bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

var connectionStatuses = map[string]bool{ConnectionConnected: true, ConnectionRevoked: true}

// Validate reports a connection SaveConnection must refuse.
func (c Connection) Validate() error {
	switch {
	case c.ID == "":
		return invariant("save connection: empty id")
	case c.Provider == "":
		return invariant("save connection %s: empty provider", c.ID)
	case c.Status != "" && !connectionStatuses[c.Status]:
		return invariant("save connection %s: unknown status %q", c.ID, c.Status)
	case c.UpdatedAt.IsZero():
		return invariant("save connection %s: zero updated time", c.ID)
	}
	return nil
}

// OAuthClient is a client brain registered at an authorization server
// (dynamic client registration). ClientSecret is a secret.
type OAuthClient struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	CreatedAt    time.Time
}

// ConnectFlow is an OAuth authorization in progress: the state in the
// link brain gave, the PKCE verifier (a secret), and Detail, what the
// callback needs to finish (the provider's endpoints, where to tell the
// person), as the caller encodes it.
type ConnectFlow struct {
	State     string
	PersonID  string
	Provider  string
	Verifier  string
	Detail    []byte
	ExpiresAt time.Time
	CreatedAt time.Time
}

// Connections keeps people's connections, the OAuth clients brain
// registered and the connect flows in progress. A missing record is
// engine.ErrNotFound.
//
// Refresh tokens may rotate, so one refresh per connection across
// processes: ClaimConnectionRefresh is a lease on it and
// RotateConnection a compare-and-swap on the refresh token, as for
// LinearTokens.
type Connections interface {
	// SaveConnection stores a fresh grant for (PersonID, Provider),
	// replacing the earlier one (its id is kept), its revoked state and
	// refresh lease.
	SaveConnection(ctx context.Context, c Connection) error
	// Connection returns the connection of a person ("" = the workspace)
	// to a provider.
	Connection(ctx context.Context, personID, provider string) (Connection, error)
	// ConnectionByID returns one connection.
	ConnectionByID(ctx context.Context, id string) (Connection, error)
	// ConnectionsOf returns a person's connections by provider; all
	// connections when all is true.
	ConnectionsOf(ctx context.Context, personID string, all bool) ([]Connection, error)
	// ClaimConnectionRefresh takes the connection's refresh lease until
	// until, unless another holder's is still running at now.
	ClaimConnectionRefresh(ctx context.Context, now time.Time, id string, until time.Time) (claimed bool, err error)
	// ExpiringConnections returns up to limit connected connections with
	// a refresh token whose access token expires at or before before,
	// soonest first (the refresh worker refreshes them ahead of use).
	ExpiringConnections(ctx context.Context, before time.Time, limit int) ([]Connection, error)
	// RotateConnection replaces the tokens, expiry and scope (and the
	// refresh token's expiry, each when next's is set) with next's if the stored refresh token is still
	// oldRefresh, and releases the lease; swapped is false otherwise.
	RotateConnection(ctx context.Context, id, oldRefresh string, next Connection) (swapped bool, err error)
	// RevokeConnection marks the connection revoked with problem and
	// forgets its tokens; revoking a revoked one keeps its first problem.
	// changed is false when it was revoked already.
	RevokeConnection(ctx context.Context, now time.Time, id, problem string) (changed bool, err error)
	// MarkServiceAccount sets or clears the connection's ServiceAccount
	// mark (an admin's act: schedules may use it). changed is false when
	// it already was so. A new grant (SaveConnection with the mark unset)
	// clears it: the admin vouched for the grant they saw.
	MarkServiceAccount(ctx context.Context, now time.Time, id string, enabled bool) (changed bool, err error)

	// SaveOAuthClient records the client registered at an issuer.
	SaveOAuthClient(ctx context.Context, c OAuthClient) error
	// OAuthClient returns the client registered at an issuer.
	OAuthClient(ctx context.Context, issuer string) (OAuthClient, error)

	// SaveConnectFlow records a flow in progress (expired ones are pruned).
	SaveConnectFlow(ctx context.Context, now time.Time, f ConnectFlow) error
	// ConsumeConnectFlow uses a flow up: ok once, for a flow saved and
	// not expired at now.
	ConsumeConnectFlow(ctx context.Context, now time.Time, state string) (f ConnectFlow, ok bool, err error)
}
