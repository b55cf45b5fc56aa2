package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/engine"
	"brain/store"
)

const codeChannelColumns = `session_id, team, channel, origin, state, context, updated_at`

// CodeChannel returns the session's code channel.
func (s *Store) CodeChannel(ctx context.Context, sessionID string) (store.CodeChannel, bool, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+codeChannelColumns+` FROM code_channels WHERE session_id = $1`, sessionID)
	return scanCodeChannel(row, "get code channel of session "+sessionID)
}

// CodeChannelAt returns the code channel with this id in the team.
func (s *Store) CodeChannelAt(ctx context.Context, team, channel string) (store.CodeChannel, bool, error) {
	if channel == "" {
		return store.CodeChannel{}, false, nil
	}
	row := s.pool.QueryRow(ctx, `SELECT `+codeChannelColumns+` FROM code_channels WHERE team = $1 AND channel = $2`, team, channel)
	return scanCodeChannel(row, "get code channel "+channel)
}

func scanCodeChannel(row pgx.Row, op string) (store.CodeChannel, bool, error) {
	var c store.CodeChannel
	var at string
	err := row.Scan(&c.SessionID, &c.Team, &c.Channel, &c.Origin, &c.State, &c.Context, &at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.CodeChannel{}, false, nil
	case err != nil:
		return store.CodeChannel{}, false, fmt.Errorf("%s: %w", op, err)
	}
	if c.UpdatedAt, err = parseTime(at); err != nil {
		return store.CodeChannel{}, false, fmt.Errorf("%s: %w", op, err)
	}
	return c, true, nil
}

// SetCodeChannel records the session's code channel.
func (s *Store) SetCodeChannel(ctx context.Context, now time.Time, c store.CodeChannel) error {
	if c.SessionID == "" {
		return fmt.Errorf("set code channel: %w: no session", engine.ErrInvalid)
	}
	_, err := s.pool.Exec(ctx,
		`INSERT INTO code_channels (`+codeChannelColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (session_id) DO UPDATE SET team = excluded.team, channel = excluded.channel, origin = excluded.origin,
		   state = excluded.state, context = excluded.context, updated_at = excluded.updated_at`,
		c.SessionID, c.Team, c.Channel, c.Origin, c.State, c.Context, formatTime(now))
	if isConstraint(err) {
		return fmt.Errorf("set code channel of session %s: channel %s belongs to another session: %w", c.SessionID, c.Channel, engine.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("set code channel of session %s: %w", c.SessionID, err)
	}
	return nil
}
