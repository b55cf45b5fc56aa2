package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"brain/store"
)

var _ store.Memory = (*Store)(nil)

const memoryFileColumns = `scope, path, content, size, version, updated_at, updated_by, session_id`

// MemoryFile returns one memory file.
func (s *Store) MemoryFile(ctx context.Context, scope, path string) (store.MemoryFile, error) {
	files, err := s.memoryFiles(ctx, s.read, `WHERE scope = ? AND path = ?`, scope, path)
	if err != nil {
		return store.MemoryFile{}, fmt.Errorf("get memory file %s %s: %w", scope, path, err)
	}
	if len(files) == 0 {
		return store.MemoryFile{}, notFound("memory file", scope+" "+path)
	}
	return files[0], nil
}

// MemoryFiles returns every file of the scope, by path.
func (s *Store) MemoryFiles(ctx context.Context, scope string) ([]store.MemoryFile, error) {
	files, err := s.memoryFiles(ctx, s.read, `WHERE scope = ? ORDER BY path`, scope)
	if err != nil {
		return nil, fmt.Errorf("list memory files of %s: %w", scope, err)
	}
	return files, nil
}

func (s *Store) memoryFiles(ctx context.Context, q queryer, where string, args ...any) ([]store.MemoryFile, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+memoryFileColumns+` FROM memory_files `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.MemoryFile
	for rows.Next() {
		var f store.MemoryFile
		var at string
		if err := rows.Scan(&f.Scope, &f.Path, &f.Content, &f.Size, &f.Version, &at, &f.UpdatedBy, &f.SessionID); err != nil {
			return nil, err
		}
		if f.UpdatedAt, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// MemoryScopes returns every scope that holds a file.
func (s *Store) MemoryScopes(ctx context.Context) ([]store.MemoryScope, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT scope, files, bytes FROM memory_scopes WHERE files > 0 ORDER BY scope`)
	if err != nil {
		return nil, fmt.Errorf("list memory scopes: %w", err)
	}
	defer rows.Close()
	var out []store.MemoryScope
	for rows.Next() {
		var m store.MemoryScope
		if err := rows.Scan(&m.Scope, &m.Files, &m.Bytes); err != nil {
			return nil, fmt.Errorf("list memory scopes: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list memory scopes: %w", err)
	}
	return out, nil
}

// CommitMemory applies c in one transaction: each write only if its file
// has the version the writer read, then the scope's limits.
func (s *Store) CommitMemory(ctx context.Context, c store.MemoryCommit) error {
	if err := store.CheckMemoryCommit(c); err != nil {
		return err
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var before store.MemoryScope
		err := tx.QueryRowContext(ctx, `SELECT files, bytes FROM memory_scopes WHERE scope = ?`, c.Scope).Scan(&before.Files, &before.Bytes)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		after := before
		now := formatTime(c.Now)
		for _, w := range c.Writes {
			var version, size int64
			err := tx.QueryRowContext(ctx, `SELECT version, size FROM memory_files WHERE scope = ? AND path = ?`, c.Scope, w.Path).Scan(&version, &size)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if version != w.Expect {
				return store.MemoryConflict(c.Scope, w.Path, w.Expect, version)
			}
			next := version + 1
			switch {
			case w.Delete:
				_, err = tx.ExecContext(ctx, `DELETE FROM memory_files WHERE scope = ? AND path = ?`, c.Scope, w.Path)
				after.Files--
				after.Bytes -= size
				next = 0
			case version == 0:
				_, err = tx.ExecContext(ctx, `INSERT INTO memory_files (`+memoryFileColumns+`) VALUES (?, ?, ?, ?, 1, ?, ?, ?)`,
					c.Scope, w.Path, w.Content, len(w.Content), now, c.By, c.SessionID)
				after.Files++
				after.Bytes += int64(len(w.Content))
			default:
				_, err = tx.ExecContext(ctx, `UPDATE memory_files SET content = ?, size = ?, version = ?, updated_at = ?, updated_by = ?, session_id = ?
					WHERE scope = ? AND path = ?`, w.Content, len(w.Content), next, now, c.By, c.SessionID, c.Scope, w.Path)
				after.Bytes += int64(len(w.Content)) - size
			}
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO memory_history (scope, path, op, version, diff, by_who, session_id, at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.Scope, w.Path, w.Op, next, w.Diff, c.By, c.SessionID, now); err != nil {
				return err
			}
		}
		if err := store.CheckMemoryLimits(c, before, after); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO memory_scopes (scope, files, bytes) VALUES (?, ?, ?)
			ON CONFLICT (scope) DO UPDATE SET files = excluded.files, bytes = excluded.bytes`, c.Scope, after.Files, after.Bytes)
		return err
	})
	return interpretError("commit memory "+c.Scope, err)
}

// MemoryHistory returns the scope's changes, newest first.
func (s *Store) MemoryHistory(ctx context.Context, scope, path string, limit int) ([]store.MemoryChange, error) {
	q := `SELECT id, scope, path, op, version, diff, by_who, session_id, at FROM memory_history WHERE scope = ?`
	args := []any{scope}
	if path != "" {
		q += ` AND path = ?`
		args = append(args, path)
	}
	rows, err := s.read.QueryContext(ctx, q+` ORDER BY id DESC LIMIT ?`, append(args, store.HistoryLimit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("memory history of %s: %w", scope, err)
	}
	defer rows.Close()
	var out []store.MemoryChange
	for rows.Next() {
		var m store.MemoryChange
		var at string
		if err := rows.Scan(&m.ID, &m.Scope, &m.Path, &m.Op, &m.Version, &m.Diff, &m.By, &m.SessionID, &at); err != nil {
			return nil, fmt.Errorf("memory history of %s: %w", scope, err)
		}
		if m.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("memory history of %s: %w", scope, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("memory history of %s: %w", scope, err)
	}
	return out, nil
}
