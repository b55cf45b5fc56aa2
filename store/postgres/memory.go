package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

var _ store.Memory = (*Store)(nil)

const memoryFileColumns = `scope, path, content, size, version, updated_at, updated_by, session_id`

// MemoryFile returns one memory file.
func (s *Store) MemoryFile(ctx context.Context, scope, path string) (store.MemoryFile, error) {
	files, err := memoryFiles(ctx, s.pool, `WHERE scope = $1 AND path = $2`, scope, path)
	if err != nil {
		return store.MemoryFile{}, interpretError(fmt.Sprintf("get memory file %s %s", scope, path), err)
	}
	if len(files) == 0 {
		return store.MemoryFile{}, notFound("memory file", scope+" "+path)
	}
	return files[0], nil
}

// MemoryFiles returns every file of the scope, by path.
func (s *Store) MemoryFiles(ctx context.Context, scope string) ([]store.MemoryFile, error) {
	files, err := memoryFiles(ctx, s.pool, `WHERE scope = $1 ORDER BY path`, scope)
	if err != nil {
		return nil, interpretError("list memory files of "+scope, err)
	}
	return files, nil
}

func memoryFiles(ctx context.Context, q querier, where string, args ...any) ([]store.MemoryFile, error) {
	rows, err := q.Query(ctx, `SELECT `+memoryFileColumns+` FROM memory_files `+where, args...)
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
	rows, err := s.pool.Query(ctx, `SELECT scope, files, bytes FROM memory_scopes WHERE files > 0 ORDER BY scope`)
	if err != nil {
		return nil, interpretError("list memory scopes", err)
	}
	defer rows.Close()
	var out []store.MemoryScope
	for rows.Next() {
		var m store.MemoryScope
		if err := rows.Scan(&m.Scope, &m.Files, &m.Bytes); err != nil {
			return nil, interpretError("list memory scopes", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError("list memory scopes", err)
	}
	return out, nil
}

// CommitMemory applies c in one transaction. It locks the scope's row
// first, so writers of one scope (on any replica) take turns: each sees
// the versions and totals the one before it committed.
func (s *Store) CommitMemory(ctx context.Context, c store.MemoryCommit) error {
	if err := store.CheckMemoryCommit(c); err != nil {
		return err
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO memory_scopes (scope, files, bytes) VALUES ($1, 0, 0) ON CONFLICT (scope) DO NOTHING`, c.Scope); err != nil {
			return err
		}
		var before store.MemoryScope
		if err := tx.QueryRow(ctx, `SELECT files, bytes FROM memory_scopes WHERE scope = $1 FOR UPDATE`, c.Scope).Scan(&before.Files, &before.Bytes); err != nil {
			return err
		}
		after := before
		now := formatTime(c.Now)
		for _, w := range c.Writes {
			var version, size int64
			err := tx.QueryRow(ctx, `SELECT version, size FROM memory_files WHERE scope = $1 AND path = $2`, c.Scope, w.Path).Scan(&version, &size)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if version != w.Expect {
				return store.MemoryConflict(c.Scope, w.Path, w.Expect, version)
			}
			next := version + 1
			switch {
			case w.Delete:
				_, err = tx.Exec(ctx, `DELETE FROM memory_files WHERE scope = $1 AND path = $2`, c.Scope, w.Path)
				after.Files--
				after.Bytes -= size
				next = 0
			case version == 0:
				_, err = tx.Exec(ctx, `INSERT INTO memory_files (`+memoryFileColumns+`) VALUES ($1, $2, $3, $4, 1, $5, $6, $7)`,
					c.Scope, w.Path, w.Content, len(w.Content), now, c.By, c.SessionID)
				after.Files++
				after.Bytes += int64(len(w.Content))
			default:
				_, err = tx.Exec(ctx, `UPDATE memory_files SET content = $1, size = $2, version = $3, updated_at = $4, updated_by = $5, session_id = $6
					WHERE scope = $7 AND path = $8`, w.Content, len(w.Content), next, now, c.By, c.SessionID, c.Scope, w.Path)
				after.Bytes += int64(len(w.Content)) - size
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO memory_history (scope, path, op, version, diff, by_who, session_id, at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.Scope, w.Path, w.Op, next, w.Diff, c.By, c.SessionID, now); err != nil {
				return err
			}
		}
		if err := store.CheckMemoryLimits(c, before, after); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE memory_scopes SET files = $2, bytes = $3 WHERE scope = $1`, c.Scope, after.Files, after.Bytes)
		return err
	})
	return interpretError("commit memory "+c.Scope, err)
}

// MemoryHistory returns the scope's changes, newest first.
func (s *Store) MemoryHistory(ctx context.Context, scope, path string, limit int) ([]store.MemoryChange, error) {
	q := `SELECT id, scope, path, op, version, diff, by_who, session_id, at FROM memory_history WHERE scope = $1`
	args := []any{scope}
	if path != "" {
		q += ` AND path = $2`
		args = append(args, path)
	}
	args = append(args, store.HistoryLimit(limit))
	rows, err := s.pool.Query(ctx, q+fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, interpretError("memory history of "+scope, err)
	}
	defer rows.Close()
	var out []store.MemoryChange
	for rows.Next() {
		var m store.MemoryChange
		var at string
		if err := rows.Scan(&m.ID, &m.Scope, &m.Path, &m.Op, &m.Version, &m.Diff, &m.By, &m.SessionID, &at); err != nil {
			return nil, interpretError("memory history of "+scope, err)
		}
		if m.At, err = parseTime(at); err != nil {
			return nil, interpretError("memory history of "+scope, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError("memory history of "+scope, err)
	}
	return out, nil
}
