package store

import (
	"context"
	"time"
)

// Linear workspace connection states.
const (
	// LinearConnected: the tokens work, or can be refreshed.
	LinearConnected = "connected"
	// LinearRevoked: Linear refused the refresh token (revoked, or the app
	// was uninstalled); the workspace must install the app again.
	LinearRevoked = "revoked"
)

// LinearToken is the OAuth grant of one Linear workspace (organization)
// that installed the app. AccessToken and RefreshToken are secrets: never
// log them or put them in errors.
type LinearToken struct {
	OrganizationID   string
	OrganizationName string
	URLKey           string // the workspace's URL key (linear.app/<key>)
	AppUserID        string // the app's user in that workspace
	AccessToken      string
	RefreshToken     string
	// ExpiresAt is when AccessToken stops working; zero means never said.
	ExpiresAt time.Time
	Scope     string
	// Status is LinearConnected or LinearRevoked; Problem says why a
	// workspace is revoked, fit to show an operator (no secrets).
	Status    string
	Problem   string
	UpdatedAt time.Time
}

var linearStatuses = map[string]bool{LinearConnected: true, LinearRevoked: true}

// Validate reports a grant LinearTokens.SaveLinearToken must refuse, with
// an error matching engine.ErrInvariant: it needs an organization id, a
// known status (empty is LinearConnected) and an updated time.
func (t LinearToken) Validate() error {
	switch {
	case t.OrganizationID == "":
		return invariant("save linear token: empty organization id")
	case t.Status != "" && !linearStatuses[t.Status]:
		return invariant("save linear token %s: unknown status %q", t.OrganizationID, t.Status)
	case t.UpdatedAt.IsZero():
		return invariant("save linear token %s: zero updated time", t.OrganizationID)
	}
	return nil
}

// LinearTokens keeps the OAuth grants of the Linear workspaces that
// installed the app, the single-use states of install flows in progress,
// and which workspace each Linear agent session belongs to. A missing
// record is engine.ErrNotFound.
//
// Refresh tokens rotate (the old one stops working once used), so two
// processes must never refresh one workspace at once: ClaimLinearRefresh is
// a lease on the refresh, and RotateLinearToken a compare-and-swap on the
// refresh token, so a refresh that lost a race never overwrites the winner.
type LinearTokens interface {
	// SaveLinearToken stores a fresh grant (an install), replacing the
	// workspace's earlier one and any revoked state or refresh lease.
	SaveLinearToken(ctx context.Context, tok LinearToken) error
	// LinearToken returns one workspace's grant.
	LinearToken(ctx context.Context, organizationID string) (LinearToken, error)
	// LinearTokens returns every workspace's grant, by organization id.
	LinearTokens(ctx context.Context) ([]LinearToken, error)
	// ClaimLinearRefresh takes the workspace's refresh lease until until,
	// unless another holder's lease is still running at now. claimed is
	// false when someone else holds it (wait, then read the token again).
	ClaimLinearRefresh(ctx context.Context, now time.Time, organizationID string, until time.Time) (claimed bool, err error)
	// RotateLinearToken replaces the workspace's tokens, expiry and
	// updated time with next's in one transaction, if its stored refresh
	// token is still oldRefresh, and releases the refresh lease. swapped is
	// false (nothing written) when the stored one changed meanwhile.
	RotateLinearToken(ctx context.Context, organizationID, oldRefresh string, next LinearToken) (swapped bool, err error)
	// RevokeLinearToken marks the workspace revoked with problem, if its
	// stored refresh token is still refresh, and releases the lease.
	RevokeLinearToken(ctx context.Context, now time.Time, organizationID, refresh, problem string) error

	// SaveOAuthState records an install flow's state, valid until expires.
	SaveOAuthState(ctx context.Context, now time.Time, state string, expires time.Time) error
	// ConsumeOAuthState uses a state up: ok is true once, for a state saved
	// and not expired at now; never again after.
	ConsumeOAuthState(ctx context.Context, now time.Time, state string) (ok bool, err error)

	// SetLinearSessionOrganization records which workspace a Linear agent
	// session belongs to (a session's activities need its token).
	SetLinearSessionOrganization(ctx context.Context, now time.Time, agentSessionID, organizationID string) error
	// LinearSessionOrganization returns the workspace of a Linear agent
	// session; ok is false when none was recorded.
	LinearSessionOrganization(ctx context.Context, agentSessionID string) (organizationID string, ok bool, err error)
	// SetLinearSessionTeam records the team of a Linear agent session's
	// issue: the channel its memory shares with the team's other issues.
	SetLinearSessionTeam(ctx context.Context, now time.Time, agentSessionID, teamID string) error
	// LinearSessionTeam returns the team of a Linear agent session's
	// issue; ok is false when none was recorded.
	LinearSessionTeam(ctx context.Context, agentSessionID string) (teamID string, ok bool, err error)

	// ParkLinearInbound keeps an inbox item of a disconnected workspace
	// (ThreadKey, Kind and Payload are kept) until it reconnects.
	ParkLinearInbound(ctx context.Context, now time.Time, organizationID string, item Inbound) error
	// ParkedLinearInbound returns the workspace's parked items, oldest
	// first, with their park ids in ID.
	ParkedLinearInbound(ctx context.Context, organizationID string) ([]Inbound, error)
	// UnparkLinearInbound forgets a parked item; forgetting one already
	// gone is not an error.
	UnparkLinearInbound(ctx context.Context, id int64) error
}
