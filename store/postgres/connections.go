package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

var _ store.Connections = (*Store)(nil)

const connectionColumns = `id, person_id, provider, account, access_token, refresh_token, scope,
	expires_at, status, problem, service_account, created_at, updated_at, refresh_expires_at`

// SaveConnection stores a fresh grant for (person, provider), keeping the
// id of an earlier one and clearing its revoked state and lease.
func (s *Store) SaveConnection(ctx context.Context, c store.Connection) error {
	if c.Status == "" {
		c.Status = store.ConnectionConnected
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = c.UpdatedAt
	}
	if err := c.Validate(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx,
		`INSERT INTO connections (`+connectionColumns+`, refresh_until)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL)
		 ON CONFLICT (person_id, provider) DO UPDATE SET
		   account = excluded.account, access_token = excluded.access_token,
		   refresh_token = excluded.refresh_token, scope = excluded.scope,
		   expires_at = excluded.expires_at, status = excluded.status, problem = excluded.problem,
		   service_account = excluded.service_account, refresh_until = NULL, updated_at = excluded.updated_at,
		   refresh_expires_at = excluded.refresh_expires_at`,
		c.ID, c.PersonID, c.Provider, c.Account, c.AccessToken, c.RefreshToken, c.Scope,
		optionalTime(c.ExpiresAt), c.Status, c.Problem, c.ServiceAccount,
		formatTime(c.CreatedAt), formatTime(c.UpdatedAt), optionalTime(c.RefreshExpiresAt))
	if err != nil {
		return interpretError(fmt.Sprintf("save connection %s", c.ID), err)
	}
	return nil
}

// Connection returns a person's connection to a provider.
func (s *Store) Connection(ctx context.Context, personID, provider string) (store.Connection, error) {
	cs, err := s.connections(ctx, `WHERE person_id = $1 AND provider = $2`, personID, provider)
	if err != nil {
		return store.Connection{}, fmt.Errorf("get connection of %q to %s: %w", personID, provider, err)
	}
	if len(cs) == 0 {
		return store.Connection{}, notFound("connection to", provider)
	}
	return cs[0], nil
}

// ConnectionByID returns one connection.
func (s *Store) ConnectionByID(ctx context.Context, id string) (store.Connection, error) {
	cs, err := s.connections(ctx, `WHERE id = $1`, id)
	if err != nil {
		return store.Connection{}, fmt.Errorf("get connection %s: %w", id, err)
	}
	if len(cs) == 0 {
		return store.Connection{}, notFound("connection", id)
	}
	return cs[0], nil
}

// ConnectionsOf returns a person's connections (or all), by provider.
func (s *Store) ConnectionsOf(ctx context.Context, personID string, all bool) ([]store.Connection, error) {
	where, args := `WHERE person_id = $1`, []any{personID}
	if all {
		where, args = ``, nil
	}
	cs, err := s.connections(ctx, where, args...)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	return cs, nil
}

func (s *Store) connections(ctx context.Context, where string, args ...any) ([]store.Connection, error) {
	return s.queryConnections(ctx, where+` ORDER BY person_id, provider`, args...)
}

// ExpiringConnections returns connected connections with a refresh token
// whose access token expires at or before before, soonest first.
func (s *Store) ExpiringConnections(ctx context.Context, before time.Time, limit int) ([]store.Connection, error) {
	cs, err := s.queryConnections(ctx, `WHERE status = $1 AND expires_at IS NOT NULL AND expires_at <= $2 AND refresh_token <> ''
		ORDER BY expires_at, id LIMIT $3`, store.ConnectionConnected, formatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("list expiring connections: %w", err)
	}
	return cs, nil
}

func (s *Store) queryConnections(ctx context.Context, tail string, args ...any) ([]store.Connection, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+connectionColumns+` FROM connections `+tail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Connection
	for rows.Next() {
		var (
			c                       store.Connection
			expires, refreshExpires *string
			created, updated        string
		)
		if err := rows.Scan(&c.ID, &c.PersonID, &c.Provider, &c.Account, &c.AccessToken, &c.RefreshToken, &c.Scope,
			&expires, &c.Status, &c.Problem, &c.ServiceAccount, &created, &updated, &refreshExpires); err != nil {
			return nil, err
		}
		var err error
		if c.RefreshExpiresAt, err = parseOptionalTime(refreshExpires); err != nil {
			return nil, err
		}
		if c.ExpiresAt, err = parseOptionalTime(expires); err == nil {
			if c.CreatedAt, err = parseTime(created); err == nil {
				c.UpdatedAt, err = parseTime(updated)
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ClaimConnectionRefresh takes the refresh lease with one conditional update.
func (s *Store) ClaimConnectionRefresh(ctx context.Context, now time.Time, id string, until time.Time) (bool, error) {
	res, err := s.pool.Exec(ctx,
		`UPDATE connections SET refresh_until = $1
		 WHERE id = $2 AND status = $3 AND (refresh_until IS NULL OR refresh_until <= $4)`,
		formatTime(until), id, store.ConnectionConnected, formatTime(now))
	if err != nil {
		return false, fmt.Errorf("claim refresh of connection %s: %w", id, err)
	}
	n := res.RowsAffected()
	if n == 0 {
		if _, err := s.ConnectionByID(ctx, id); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// RotateConnection swaps in refreshed tokens if the stored refresh token
// is still oldRefresh.
func (s *Store) RotateConnection(ctx context.Context, id, oldRefresh string, next store.Connection) (bool, error) {
	if next.UpdatedAt.IsZero() {
		return false, invariant("rotate connection %s: zero updated time", id)
	}
	res, err := s.pool.Exec(ctx,
		`UPDATE connections SET access_token = $1, refresh_token = $2, expires_at = $3,
		   scope = CASE WHEN $4 = '' THEN scope ELSE $4 END, refresh_until = NULL, updated_at = $5,
		   refresh_expires_at = COALESCE($9, refresh_expires_at)
		 WHERE id = $6 AND status = $7 AND refresh_token = $8`,
		next.AccessToken, next.RefreshToken, optionalTime(next.ExpiresAt), next.Scope,
		formatTime(next.UpdatedAt), id, store.ConnectionConnected, oldRefresh, optionalTime(next.RefreshExpiresAt))
	if err != nil {
		return false, fmt.Errorf("rotate connection %s: %w", id, err)
	}
	n := res.RowsAffected()
	return n == 1, nil
}

// RevokeConnection marks the connection revoked and forgets its tokens.
func (s *Store) RevokeConnection(ctx context.Context, now time.Time, id, problem string) (bool, error) {
	res, err := s.pool.Exec(ctx,
		`UPDATE connections SET status = $1, problem = $2, access_token = '', refresh_token = '',
		   refresh_until = NULL, updated_at = $3
		 WHERE id = $4 AND status <> $5`,
		store.ConnectionRevoked, problem, formatTime(now), id, store.ConnectionRevoked)
	if err != nil {
		return false, fmt.Errorf("revoke connection %s: %w", id, err)
	}
	n := res.RowsAffected()
	if n == 0 {
		if _, err := s.ConnectionByID(ctx, id); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// MarkServiceAccount sets or clears the service-account mark.
func (s *Store) MarkServiceAccount(ctx context.Context, now time.Time, id string, enabled bool) (bool, error) {
	res, err := s.pool.Exec(ctx,
		`UPDATE connections SET service_account = $1, updated_at = $2
		 WHERE id = $3 AND service_account <> $1`,
		enabled, formatTime(now), id)
	if err != nil {
		return false, fmt.Errorf("mark connection %s: %w", id, err)
	}
	n := res.RowsAffected()
	if n == 0 {
		if _, err := s.ConnectionByID(ctx, id); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// SaveOAuthClient records the client registered at an issuer.
func (s *Store) SaveOAuthClient(ctx context.Context, c store.OAuthClient) error {
	if c.Issuer == "" || c.ClientID == "" {
		return invariant("save oauth client: empty issuer or client id")
	}
	_, err := s.pool.Exec(ctx,
		`INSERT INTO oauth_clients (issuer, client_id, client_secret, created_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (issuer) DO UPDATE SET client_id = excluded.client_id,
		   client_secret = excluded.client_secret, created_at = excluded.created_at`,
		c.Issuer, c.ClientID, c.ClientSecret, formatTime(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("save oauth client of %s: %w", c.Issuer, err)
	}
	return nil
}

// OAuthClient returns the client registered at an issuer.
func (s *Store) OAuthClient(ctx context.Context, issuer string) (store.OAuthClient, error) {
	c := store.OAuthClient{Issuer: issuer}
	var created string
	err := s.pool.QueryRow(ctx,
		`SELECT client_id, client_secret, created_at FROM oauth_clients WHERE issuer = $1`, issuer).Scan(&c.ClientID, &c.ClientSecret, &created)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return c, notFound("oauth client of", issuer)
	case err != nil:
		return c, fmt.Errorf("get oauth client of %s: %w", issuer, err)
	}
	c.CreatedAt, err = parseTime(created)
	return c, err
}

// SaveConnectFlow records a flow in progress, pruning expired ones.
func (s *Store) SaveConnectFlow(ctx context.Context, now time.Time, f store.ConnectFlow) error {
	if f.State == "" || f.Provider == "" {
		return invariant("save connect flow: empty state or provider")
	}
	return s.writeTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM connect_flows WHERE expires_at <= $1`, formatTime(now)); err != nil {
			return fmt.Errorf("prune connect flows: %w", err)
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO connect_flows (state, person_id, provider, verifier, detail, expires_at, created_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			f.State, f.PersonID, f.Provider, f.Verifier, nonNilBytesPG(f.Detail), formatTime(f.ExpiresAt), formatTime(now)); err != nil {
			return interpretError("save connect flow", err)
		}
		return nil
	})
}

// ConsumeConnectFlow deletes the flow and returns it if it was live.
func (s *Store) ConsumeConnectFlow(ctx context.Context, now time.Time, state string) (store.ConnectFlow, bool, error) {
	var (
		f                store.ConnectFlow
		expires, created string
	)
	err := s.pool.QueryRow(ctx,
		`DELETE FROM connect_flows WHERE state = $1 AND expires_at > $2
		 RETURNING state, person_id, provider, verifier, detail, expires_at, created_at`,
		state, formatTime(now)).Scan(&f.State, &f.PersonID, &f.Provider, &f.Verifier, &f.Detail, &expires, &created)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.ConnectFlow{}, false, nil
	case err != nil:
		return store.ConnectFlow{}, false, fmt.Errorf("consume connect flow: %w", err)
	}
	if f.ExpiresAt, err = parseTime(expires); err == nil {
		f.CreatedAt, err = parseTime(created)
	}
	return f, err == nil, err
}

func nonNilBytesPG(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
