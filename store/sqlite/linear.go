package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"brain/store"
)

var _ store.LinearTokens = (*Store)(nil)

const linearTokenColumns = `organization_id, organization_name, url_key, app_user_id, access_token,
	refresh_token, expires_at, scope, status, problem, updated_at`

// SaveLinearToken stores a fresh grant, replacing the workspace's earlier
// one, its revoked state and its refresh lease.
func (s *Store) SaveLinearToken(ctx context.Context, tok store.LinearToken) error {
	if tok.Status == "" {
		tok.Status = store.LinearConnected
	}
	if err := tok.Validate(); err != nil {
		return err
	}
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO linear_tokens (`+linearTokenColumns+`, refresh_until)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '')
		 ON CONFLICT (organization_id) DO UPDATE SET
		   organization_name = excluded.organization_name, url_key = excluded.url_key,
		   app_user_id = excluded.app_user_id, access_token = excluded.access_token,
		   refresh_token = excluded.refresh_token, expires_at = excluded.expires_at,
		   scope = excluded.scope, status = excluded.status, problem = excluded.problem,
		   refresh_until = '', updated_at = excluded.updated_at`,
		tok.OrganizationID, tok.OrganizationName, tok.URLKey, tok.AppUserID, tok.AccessToken,
		tok.RefreshToken, formatOptionalTime(tok.ExpiresAt), tok.Scope, tok.Status, tok.Problem,
		formatTime(tok.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save linear token of %s: %w", tok.OrganizationID, err)
	}
	return nil
}

// LinearToken returns one workspace's grant.
func (s *Store) LinearToken(ctx context.Context, organizationID string) (store.LinearToken, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+linearTokenColumns+` FROM linear_tokens WHERE organization_id = ?`, organizationID)
	if err != nil {
		return store.LinearToken{}, fmt.Errorf("get linear token of %s: %w", organizationID, err)
	}
	toks, err := scanLinearTokens(rows)
	if err != nil {
		return store.LinearToken{}, fmt.Errorf("get linear token of %s: %w", organizationID, err)
	}
	if len(toks) == 0 {
		return store.LinearToken{}, notFound("linear workspace", organizationID)
	}
	return toks[0], nil
}

// LinearTokens returns every workspace's grant, by organization id.
func (s *Store) LinearTokens(ctx context.Context) ([]store.LinearToken, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+linearTokenColumns+` FROM linear_tokens ORDER BY organization_id`)
	if err != nil {
		return nil, fmt.Errorf("list linear tokens: %w", err)
	}
	toks, err := scanLinearTokens(rows)
	if err != nil {
		return nil, fmt.Errorf("list linear tokens: %w", err)
	}
	return toks, nil
}

func scanLinearTokens(rows *sql.Rows) ([]store.LinearToken, error) {
	defer rows.Close()
	var out []store.LinearToken
	for rows.Next() {
		var (
			t                  store.LinearToken
			expires, updatedAt string
		)
		if err := rows.Scan(&t.OrganizationID, &t.OrganizationName, &t.URLKey, &t.AppUserID, &t.AccessToken,
			&t.RefreshToken, &expires, &t.Scope, &t.Status, &t.Problem, &updatedAt); err != nil {
			return nil, err
		}
		var err error
		if t.ExpiresAt, err = parseOptionalTime(expires); err != nil {
			return nil, err
		}
		if t.UpdatedAt, err = parseTime(updatedAt); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ClaimLinearRefresh takes the refresh lease with one conditional update,
// so of two processes exactly one gets it.
func (s *Store) ClaimLinearRefresh(ctx context.Context, now time.Time, organizationID string, until time.Time) (bool, error) {
	res, err := s.write.ExecContext(ctx,
		`UPDATE linear_tokens SET refresh_until = ?
		 WHERE organization_id = ? AND (refresh_until = '' OR refresh_until <= ?)`,
		formatTime(until), organizationID, formatTime(now))
	if err != nil {
		return false, fmt.Errorf("claim linear refresh of %s: %w", organizationID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim linear refresh of %s: %w", organizationID, err)
	}
	if n == 0 {
		if _, err := s.LinearToken(ctx, organizationID); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// RotateLinearToken swaps in the refreshed pair if the stored refresh
// token is still oldRefresh (one statement: one transaction).
func (s *Store) RotateLinearToken(ctx context.Context, organizationID, oldRefresh string, next store.LinearToken) (bool, error) {
	if next.UpdatedAt.IsZero() {
		return false, invariant("rotate linear token %s: zero updated time", organizationID)
	}
	res, err := s.write.ExecContext(ctx,
		`UPDATE linear_tokens SET access_token = ?, refresh_token = ?, expires_at = ?,
		   scope = CASE WHEN ? = '' THEN scope ELSE ? END,
		   status = ?, problem = '', refresh_until = '', updated_at = ?
		 WHERE organization_id = ? AND refresh_token = ?`,
		next.AccessToken, next.RefreshToken, formatOptionalTime(next.ExpiresAt), next.Scope, next.Scope,
		store.LinearConnected, formatTime(next.UpdatedAt), organizationID, oldRefresh)
	if err != nil {
		return false, fmt.Errorf("rotate linear token of %s: %w", organizationID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("rotate linear token of %s: %w", organizationID, err)
	}
	return n == 1, nil
}

// RevokeLinearToken marks the workspace revoked if its refresh token is
// still refresh.
func (s *Store) RevokeLinearToken(ctx context.Context, now time.Time, organizationID, refresh, problem string) error {
	_, err := s.write.ExecContext(ctx,
		`UPDATE linear_tokens SET status = ?, problem = ?, refresh_until = '', updated_at = ?
		 WHERE organization_id = ? AND refresh_token = ?`,
		store.LinearRevoked, problem, formatTime(now), organizationID, refresh)
	if err != nil {
		return fmt.Errorf("revoke linear token of %s: %w", organizationID, err)
	}
	return nil
}

// SaveOAuthState records an install flow's state; expired states are
// pruned on the way.
func (s *Store) SaveOAuthState(ctx context.Context, now time.Time, state string, expires time.Time) error {
	if state == "" {
		return invariant("save oauth state: empty state")
	}
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_states WHERE expires_at <= ?`, formatTime(now)); err != nil {
			return fmt.Errorf("prune oauth states: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_states (state, expires_at, created_at) VALUES (?, ?, ?)`,
			state, formatTime(expires), formatTime(now)); err != nil {
			return fmt.Errorf("save oauth state: %w", err)
		}
		return nil
	})
}

// ConsumeOAuthState deletes the state; it was valid when a live row went.
func (s *Store) ConsumeOAuthState(ctx context.Context, now time.Time, state string) (bool, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM oauth_states WHERE state = ? AND expires_at > ?`, state, formatTime(now))
	if err != nil {
		return false, fmt.Errorf("consume oauth state: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("consume oauth state: %w", err)
	}
	return n == 1, nil
}

// SetLinearSessionOrganization records the workspace of an agent session.
func (s *Store) SetLinearSessionOrganization(ctx context.Context, now time.Time, agentSessionID, organizationID string) error {
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO linear_agent_sessions (agent_session_id, organization_id, updated_at) VALUES (?, ?, ?)
		 ON CONFLICT (agent_session_id) DO UPDATE SET organization_id = excluded.organization_id, updated_at = excluded.updated_at`,
		agentSessionID, organizationID, formatTime(now))
	if err != nil {
		return fmt.Errorf("set workspace of linear session %s: %w", agentSessionID, err)
	}
	return nil
}

// LinearSessionOrganization returns the workspace of an agent session.
func (s *Store) LinearSessionOrganization(ctx context.Context, agentSessionID string) (string, bool, error) {
	var org string
	err := s.read.QueryRowContext(ctx,
		`SELECT organization_id FROM linear_agent_sessions WHERE agent_session_id = ?`, agentSessionID).Scan(&org)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get workspace of linear session %s: %w", agentSessionID, err)
	}
	// A row the team's write made first has no workspace yet.
	return org, org != "", nil
}

// SetLinearSessionTeam records the team of an agent session's issue. A
// session not seen before gets an empty workspace until one is recorded.
func (s *Store) SetLinearSessionTeam(ctx context.Context, now time.Time, agentSessionID, teamID string) error {
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO linear_agent_sessions (agent_session_id, organization_id, team_id, updated_at) VALUES (?, '', ?, ?)
		 ON CONFLICT (agent_session_id) DO UPDATE SET team_id = excluded.team_id, updated_at = excluded.updated_at`,
		agentSessionID, teamID, formatTime(now))
	if err != nil {
		return fmt.Errorf("set team of linear session %s: %w", agentSessionID, err)
	}
	return nil
}

// LinearSessionTeam returns the team of an agent session's issue.
func (s *Store) LinearSessionTeam(ctx context.Context, agentSessionID string) (string, bool, error) {
	var team string
	err := s.read.QueryRowContext(ctx,
		`SELECT team_id FROM linear_agent_sessions WHERE agent_session_id = ?`, agentSessionID).Scan(&team)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get team of linear session %s: %w", agentSessionID, err)
	}
	return team, team != "", nil
}

// ParkLinearInbound keeps an item of a disconnected workspace.
func (s *Store) ParkLinearInbound(ctx context.Context, now time.Time, organizationID string, item store.Inbound) error {
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO linear_parked_inbound (organization_id, thread_key, kind, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
		organizationID, item.ThreadKey, item.Kind, item.Payload, formatTime(now))
	if err != nil {
		return fmt.Errorf("park linear item of %s: %w", organizationID, err)
	}
	return nil
}

// ParkedLinearInbound returns the workspace's parked items, oldest first.
func (s *Store) ParkedLinearInbound(ctx context.Context, organizationID string) ([]store.Inbound, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT id, thread_key, kind, payload, created_at FROM linear_parked_inbound WHERE organization_id = ? ORDER BY id`, organizationID)
	if err != nil {
		return nil, fmt.Errorf("list parked linear items of %s: %w", organizationID, err)
	}
	defer rows.Close()
	var out []store.Inbound
	for rows.Next() {
		var (
			it      store.Inbound
			created string
		)
		if err := rows.Scan(&it.ID, &it.ThreadKey, &it.Kind, &it.Payload, &created); err != nil {
			return nil, fmt.Errorf("list parked linear items of %s: %w", organizationID, err)
		}
		if it.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("list parked linear items of %s: %w", organizationID, err)
		}
		it.Source = "linear"
		out = append(out, it)
	}
	return out, rows.Err()
}

// UnparkLinearInbound forgets a parked item.
func (s *Store) UnparkLinearInbound(ctx context.Context, id int64) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM linear_parked_inbound WHERE id = ?`, id); err != nil {
		return fmt.Errorf("unpark linear item %d: %w", id, err)
	}
	return nil
}
