package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"brain/engine"
	"brain/internal/oauthclient"
	"brain/store"
	"brain/tools"
)

// refreshLease bounds how long one process holds a connection's refresh.
const refreshLease = 30 * time.Second

// errRefreshHeld: another process holds the connection's refresh lease.
var errRefreshHeld = errors.New("another replica is refreshing this connection; try again")

// Tokens is one holder's connection to a provider, kept in the store
// (sealed there), as oauthclient.Tokens: readable by every replica, and
// refreshed once across them (a lease on the refresh, then a
// compare-and-swap on the refresh token).
type Tokens struct {
	Store    store.Connections
	PersonID string // "" = the workspace's connection
	Provider string
	Now      func() time.Time
	NewID    func() string
	Log      *slog.Logger
}

var _ oauthclient.Tokens = (*Tokens)(nil)

// Token implements oauthclient.Tokens: a revoked or missing connection
// has no token.
func (t *Tokens) Token(ctx context.Context) (oauthclient.Token, bool, error) {
	c, err := t.Store.Connection(ctx, t.PersonID, t.Provider)
	if errors.Is(err, engine.ErrNotFound) {
		return oauthclient.Token{}, false, nil
	}
	if err != nil {
		return oauthclient.Token{}, false, err
	}
	if c.Status != store.ConnectionConnected || c.AccessToken == "" {
		return oauthclient.Token{}, false, nil
	}
	return tokenOf(c), true, nil
}

func tokenOf(c store.Connection) oauthclient.Token {
	return oauthclient.Token{AccessToken: c.AccessToken, RefreshToken: c.RefreshToken, Scope: c.Scope, ExpiresAt: c.ExpiresAt,
		RefreshExpiresAt: c.RefreshExpiresAt}
}

// Save implements oauthclient.Tokens: a new grant replaces the holder's
// connection (its id is kept).
func (t *Tokens) Save(ctx context.Context, tok oauthclient.Token) error {
	now := t.Now()
	return t.Store.SaveConnection(ctx, store.Connection{
		ID: t.NewID(), PersonID: t.PersonID, Provider: t.Provider,
		AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Scope: tok.Scope, ExpiresAt: tok.ExpiresAt,
		RefreshExpiresAt: tok.RefreshExpiresAt, Status: store.ConnectionConnected, CreatedAt: now, UpdatedAt: now,
	})
}

// Rotate implements oauthclient.Tokens. Only the lease holder refreshes;
// a process that finds the token already rotated (by another replica)
// uses the stored one. A refused refresh revokes the connection, logged
// once across replicas (RevokeConnection reports the change once).
func (t *Tokens) Rotate(ctx context.Context, old oauthclient.Token, refresh func(context.Context, oauthclient.Token) (oauthclient.Token, error)) (oauthclient.Token, error) {
	c, err := t.Store.Connection(ctx, t.PersonID, t.Provider)
	if err != nil {
		return oauthclient.Token{}, fmt.Errorf("rotate: %w", err)
	}
	if c.Status != store.ConnectionConnected || c.AccessToken == "" {
		return oauthclient.Token{}, oauthclient.ErrNoToken
	}
	if c.AccessToken != old.AccessToken {
		return tokenOf(c), nil // another replica refreshed it
	}
	now := t.Now()
	if !c.RefreshExpiresAt.IsZero() && !now.Before(c.RefreshExpiresAt) {
		problem := fmt.Sprintf("its refresh token expired on %s: connect again", c.RefreshExpiresAt.UTC().Format("2006-01-02"))
		changed, err := t.Store.RevokeConnection(ctx, now, c.ID, problem)
		if err != nil {
			return oauthclient.Token{}, fmt.Errorf("rotate: %w", err)
		}
		if changed {
			t.Log.Warn("connection expired: its refresh token expired", tools.LogConnection, c.ID,
				tools.LogProvider, t.Provider, tools.LogPerson, t.PersonID)
		}
		return oauthclient.Token{}, oauthclient.ErrNoToken
	}
	claimed, err := t.Store.ClaimConnectionRefresh(ctx, now, c.ID, now.Add(refreshLease))
	if err != nil {
		return oauthclient.Token{}, fmt.Errorf("rotate: %w", err)
	}
	if !claimed {
		return oauthclient.Token{}, errRefreshHeld
	}
	// Another replica may have refreshed it between the read above and
	// the claim (its rotation released the lease): refreshing again with
	// the used refresh token would be refused and revoke the connection.
	if c, err = t.Store.ConnectionByID(ctx, c.ID); err != nil {
		return oauthclient.Token{}, fmt.Errorf("rotate: %w", err)
	}
	if c.Status != store.ConnectionConnected || c.AccessToken == "" {
		return oauthclient.Token{}, oauthclient.ErrNoToken
	}
	if c.AccessToken != old.AccessToken {
		// Leaves the lease to lapse (refreshLease): the connection was
		// just refreshed and needs none before then.
		return tokenOf(c), nil
	}
	next, err := refresh(ctx, tokenOf(c))
	if errors.Is(err, oauthclient.ErrRefused) {
		changed, rerr := t.Store.RevokeConnection(ctx, t.Now(), c.ID, "the provider refused the refresh token: connect again")
		if rerr == nil && changed {
			t.Log.Warn("connection revoked: the provider refused its refresh", tools.LogConnection, c.ID,
				tools.LogProvider, t.Provider, tools.LogPerson, t.PersonID)
		}
		return oauthclient.Token{}, err
	}
	if err != nil {
		return oauthclient.Token{}, err
	}
	swapped, err := t.Store.RotateConnection(ctx, c.ID, c.RefreshToken, store.Connection{
		AccessToken: next.AccessToken, RefreshToken: next.RefreshToken, Scope: next.Scope, ExpiresAt: next.ExpiresAt,
		RefreshExpiresAt: next.RefreshExpiresAt, UpdatedAt: t.Now(),
	})
	if err != nil {
		return oauthclient.Token{}, fmt.Errorf("rotate: %w", err)
	}
	if !swapped {
		cur, err := t.Store.Connection(ctx, t.PersonID, t.Provider)
		if err != nil {
			return oauthclient.Token{}, fmt.Errorf("rotate: %w", err)
		}
		return tokenOf(cur), nil
	}
	return next, nil
}

// Registrations keeps dynamically registered clients in the store (their
// secrets sealed), as oauthclient.Registrations.
type Registrations struct {
	Store store.Connections
	Now   func() time.Time
}

var _ oauthclient.Registrations = (*Registrations)(nil)

// Registration implements oauthclient.Registrations.
func (r *Registrations) Registration(ctx context.Context, issuer string) (oauthclient.Registration, bool, error) {
	c, err := r.Store.OAuthClient(ctx, issuer)
	if errors.Is(err, engine.ErrNotFound) {
		return oauthclient.Registration{}, false, nil
	}
	if err != nil {
		return oauthclient.Registration{}, false, err
	}
	return oauthclient.Registration{Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: c.ClientSecret}, true, nil
}

// SaveRegistration implements oauthclient.Registrations.
func (r *Registrations) SaveRegistration(ctx context.Context, reg oauthclient.Registration) error {
	return r.Store.SaveOAuthClient(ctx, store.OAuthClient{Issuer: reg.Issuer, ClientID: reg.ClientID,
		ClientSecret: reg.ClientSecret, CreatedAt: r.Now()})
}
