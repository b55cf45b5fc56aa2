package postgres

import (
	"brain/engine"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// WorkspaceMode returns the mode recorded for the platform's workspace.
func (s *Store) WorkspaceMode(ctx context.Context, platform engine.Origin, workspace string) (string, bool, error) {
	var mode string
	err := s.pool.QueryRow(ctx,
		`SELECT mode FROM workspace_modes WHERE platform = $1 AND workspace = $2`, platform, workspace).Scan(&mode)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get %s mode of workspace %s: %w", platform, workspace, err)
	}
	return mode, true, nil
}

// SetWorkspaceMode records mode for the platform's workspace.
func (s *Store) SetWorkspaceMode(ctx context.Context, now time.Time, platform engine.Origin, workspace, mode string) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO workspace_modes (platform, workspace, mode, updated_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (platform, workspace) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at`,
		platform, workspace, mode, formatTime(now))
	if err != nil {
		return fmt.Errorf("set %s mode of workspace %s: %w", platform, workspace, err)
	}
	return nil
}
