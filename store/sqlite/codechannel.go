package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"brain/engine"
	"brain/store"
)

const codeChannelColumns = `session_id, team, channel, origin, state, context, updated_at`

// CodeChannel returns the session's code channel.
func (s *Store) CodeChannel(ctx context.Context, sessionID string) (store.CodeChannel, bool, error) {
	row := s.read.QueryRowContext(ctx, `SELECT `+codeChannelColumns+` FROM code_channels WHERE session_id = ?`, sessionID)
	return scanCodeChannel(row, "get code channel of session "+sessionID)
}

// CodeChannelAt returns the code channel with this id in the team.
func (s *Store) CodeChannelAt(ctx context.Context, team, channel string) (store.CodeChannel, bool, error) {
	if channel == "" {
		return store.CodeChannel{}, false, nil
	}
	row := s.read.QueryRowContext(ctx, `SELECT `+codeChannelColumns+` FROM code_channels WHERE team = ? AND channel = ?`, team, channel)
	return scanCodeChannel(row, "get code channel "+channel)
}

func scanCodeChannel(row *sql.Row, op string) (store.CodeChannel, bool, error) {
	var c store.CodeChannel
	var at string
	err := row.Scan(&c.SessionID, &c.Team, &c.Channel, &c.Origin, &c.State, &c.Context, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
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
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO code_channels (`+codeChannelColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
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
