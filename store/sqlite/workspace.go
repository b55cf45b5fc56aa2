package sqlite

import (
	"brain/engine"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// WorkspaceMode returns the mode recorded for the platform's workspace.
func (s *Store) WorkspaceMode(ctx context.Context, platform engine.Origin, workspace string) (string, bool, error) {
	var mode string
	err := s.read.QueryRowContext(ctx,
		`SELECT mode FROM workspace_modes WHERE platform = ? AND workspace = ?`, platform, workspace).Scan(&mode)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get %s mode of workspace %s: %w", platform, workspace, err)
	}
	return mode, true, nil
}

// SetWorkspaceMode records mode for the platform's workspace.
func (s *Store) SetWorkspaceMode(ctx context.Context, now time.Time, platform engine.Origin, workspace, mode string) error {
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO workspace_modes (platform, workspace, mode, updated_at) VALUES (?, ?, ?, ?)
		 ON CONFLICT (platform, workspace) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at`,
		platform, workspace, mode, formatTime(now))
	if err != nil {
		return fmt.Errorf("set %s mode of workspace %s: %w", platform, workspace, err)
	}
	return nil
}
