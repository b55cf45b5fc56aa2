package store

import (
	"context"
	"fmt"
	"time"

	"brain/internal/keyring"
)

// The sealed views: LinearTokens and Connections whose credentials are
// sealed on the way in and opened on the way out, over a driver that
// stores them as opaque text. A compare-and-swap on a refresh token
// compares the plain token and then swaps on the stored (sealed) value,
// which is unique per write, so a refresh that lost a race still loses.

// SealedLinearTokens returns lt with its tokens sealed under ring (nil:
// stored plain, read plain or refused if sealed).
func SealedLinearTokens(lt LinearTokens, ring *keyring.Ring) LinearTokens {
	return sealedLinear{innerLinear: lt, ring: ring}
}

// innerLinear names the embedded driver (a field named LinearTokens would
// clash with the method of that name).
type innerLinear = LinearTokens

type sealedLinear struct {
	innerLinear
	ring *keyring.Ring
}

func (s sealedLinear) seal(t LinearToken) (LinearToken, error) {
	var err error
	if t.AccessToken, err = s.ring.Seal(sealContext("linear_tokens", "access_token", t.OrganizationID), t.AccessToken); err != nil {
		return t, err
	}
	t.RefreshToken, err = s.ring.Seal(sealContext("linear_tokens", "refresh_token", t.OrganizationID), t.RefreshToken)
	return t, err
}

func (s sealedLinear) open(t LinearToken) (LinearToken, error) {
	var err error
	if t.AccessToken, err = s.ring.Open(sealContext("linear_tokens", "access_token", t.OrganizationID), t.AccessToken); err != nil {
		return t, err
	}
	t.RefreshToken, err = s.ring.Open(sealContext("linear_tokens", "refresh_token", t.OrganizationID), t.RefreshToken)
	return t, err
}

func (s sealedLinear) SaveLinearToken(ctx context.Context, t LinearToken) error {
	t, err := s.seal(t)
	if err != nil {
		return fmt.Errorf("save linear token of %s: %w", t.OrganizationID, err)
	}
	return s.innerLinear.SaveLinearToken(ctx, t)
}

func (s sealedLinear) LinearToken(ctx context.Context, org string) (LinearToken, error) {
	t, err := s.innerLinear.LinearToken(ctx, org)
	if err != nil {
		return t, err
	}
	return s.open(t)
}

func (s sealedLinear) LinearTokens(ctx context.Context) ([]LinearToken, error) {
	ts, err := s.innerLinear.LinearTokens(ctx)
	if err != nil {
		return nil, err
	}
	for i := range ts {
		if ts[i], err = s.open(ts[i]); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// storedLinearRefresh is the stored form of the workspace's refresh token
// if it opens to plain; ok is false when it does not (someone rotated).
func (s sealedLinear) storedLinearRefresh(ctx context.Context, org, plain string) (string, bool, error) {
	t, err := s.innerLinear.LinearToken(ctx, org)
	if err != nil {
		return "", false, err
	}
	got, err := s.ring.Open(sealContext("linear_tokens", "refresh_token", org), t.RefreshToken)
	if err != nil {
		return "", false, err
	}
	return t.RefreshToken, got == plain, nil
}

func (s sealedLinear) RotateLinearToken(ctx context.Context, org, oldRefresh string, next LinearToken) (bool, error) {
	stored, ok, err := s.storedLinearRefresh(ctx, org, oldRefresh)
	if err != nil || !ok {
		return false, err
	}
	next.OrganizationID = org
	if next, err = s.seal(next); err != nil {
		return false, fmt.Errorf("rotate linear token of %s: %w", org, err)
	}
	return s.innerLinear.RotateLinearToken(ctx, org, stored, next)
}

func (s sealedLinear) RevokeLinearToken(ctx context.Context, now time.Time, org, refresh, problem string) error {
	stored, ok, err := s.storedLinearRefresh(ctx, org, refresh)
	if err != nil || !ok {
		return err
	}
	return s.innerLinear.RevokeLinearToken(ctx, now, org, stored, problem)
}

// SealedConnections returns c with its credentials sealed under ring.
func SealedConnections(c Connections, ring *keyring.Ring) Connections {
	return sealedConns{Connections: c, ring: ring}
}

type sealedConns struct {
	Connections
	ring *keyring.Ring
}

func (s sealedConns) seal(c Connection) (Connection, error) {
	var err error
	if c.AccessToken, err = s.ring.Seal(sealContext("connections", "access_token", c.ID), c.AccessToken); err != nil {
		return c, err
	}
	c.RefreshToken, err = s.ring.Seal(sealContext("connections", "refresh_token", c.ID), c.RefreshToken)
	return c, err
}

func (s sealedConns) open(c Connection) (Connection, error) {
	var err error
	if c.AccessToken, err = s.ring.Open(sealContext("connections", "access_token", c.ID), c.AccessToken); err != nil {
		return c, err
	}
	c.RefreshToken, err = s.ring.Open(sealContext("connections", "refresh_token", c.ID), c.RefreshToken)
	return c, err
}

// SaveConnection seals under the id the store keeps: a grant replacing an
// earlier one keeps the earlier id, so it is read first.
func (s sealedConns) SaveConnection(ctx context.Context, c Connection) error {
	if prev, err := s.Connections.Connection(ctx, c.PersonID, c.Provider); err == nil {
		c.ID = prev.ID
	}
	c, err := s.seal(c)
	if err != nil {
		return fmt.Errorf("save connection %s: %w", c.ID, err)
	}
	return s.Connections.SaveConnection(ctx, c)
}

func (s sealedConns) Connection(ctx context.Context, personID, provider string) (Connection, error) {
	c, err := s.Connections.Connection(ctx, personID, provider)
	if err != nil {
		return c, err
	}
	return s.open(c)
}

func (s sealedConns) ConnectionByID(ctx context.Context, id string) (Connection, error) {
	c, err := s.Connections.ConnectionByID(ctx, id)
	if err != nil {
		return c, err
	}
	return s.open(c)
}

func (s sealedConns) ConnectionsOf(ctx context.Context, personID string, all bool) ([]Connection, error) {
	cs, err := s.Connections.ConnectionsOf(ctx, personID, all)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i], err = s.open(cs[i]); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

func (s sealedConns) ExpiringConnections(ctx context.Context, before time.Time, limit int) ([]Connection, error) {
	cs, err := s.Connections.ExpiringConnections(ctx, before, limit)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i], err = s.open(cs[i]); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

func (s sealedConns) RotateConnection(ctx context.Context, id, oldRefresh string, next Connection) (bool, error) {
	cur, err := s.Connections.ConnectionByID(ctx, id)
	if err != nil {
		return false, err
	}
	plain, err := s.ring.Open(sealContext("connections", "refresh_token", id), cur.RefreshToken)
	if err != nil {
		return false, err
	}
	if plain != oldRefresh {
		return false, nil
	}
	next.ID = id
	if next, err = s.seal(next); err != nil {
		return false, fmt.Errorf("rotate connection %s: %w", id, err)
	}
	return s.Connections.RotateConnection(ctx, id, cur.RefreshToken, next)
}

func (s sealedConns) SaveOAuthClient(ctx context.Context, c OAuthClient) error {
	var err error
	if c.ClientSecret, err = s.ring.Seal(sealContext("oauth_clients", "client_secret", c.Issuer), c.ClientSecret); err != nil {
		return fmt.Errorf("save oauth client of %s: %w", c.Issuer, err)
	}
	return s.Connections.SaveOAuthClient(ctx, c)
}

func (s sealedConns) OAuthClient(ctx context.Context, issuer string) (OAuthClient, error) {
	c, err := s.Connections.OAuthClient(ctx, issuer)
	if err != nil {
		return c, err
	}
	c.ClientSecret, err = s.ring.Open(sealContext("oauth_clients", "client_secret", issuer), c.ClientSecret)
	return c, err
}

func (s sealedConns) SaveConnectFlow(ctx context.Context, now time.Time, f ConnectFlow) error {
	var err error
	if f.Verifier, err = s.ring.Seal(sealContext("connect_flows", "verifier", f.State), f.Verifier); err != nil {
		return fmt.Errorf("save connect flow: %w", err)
	}
	return s.Connections.SaveConnectFlow(ctx, now, f)
}

func (s sealedConns) ConsumeConnectFlow(ctx context.Context, now time.Time, state string) (ConnectFlow, bool, error) {
	f, ok, err := s.Connections.ConsumeConnectFlow(ctx, now, state)
	if err != nil || !ok {
		return f, ok, err
	}
	f.Verifier, err = s.ring.Open(sealContext("connect_flows", "verifier", state), f.Verifier)
	return f, err == nil, err
}
