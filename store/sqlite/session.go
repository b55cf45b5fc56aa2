package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"brain/engine"
	"brain/store"
)

// scopeSession is the idempotency scope of CreateSession keys.
const scopeSession = "session"

// sessionInsertColumns are the columns CreateSession writes; the store's
// own bookkeeping (the context checkpoint, the usage total) starts at 0.
const sessionInsertColumns = `id, agent, origin, thread_key, interactive, started_by, status,
	created_at, updated_at, last_seq, input_cursor, checkpoint, question, result, started_key`

// sessionColumns is the column list every session query selects, in the
// order scanSession reads them.
const sessionColumns = sessionInsertColumns + `,
	context_seq, usage_input, usage_output, usage_cache_read, usage_cache_write`

// CreateSession inserts s. A reused idempotency key, or a thread key that is
// already bound, returns the existing session with created=false and writes
// nothing. LastSeq starts at 0 whatever s says (there are no events yet);
// a zero UpdatedAt becomes CreatedAt and an empty Status becomes idle.
//
// Lookups and the insert share one immediate transaction, so concurrent
// calls with the same key serialize and exactly one inserts.
func (s *Store) CreateSession(ctx context.Context, sess engine.Session, idempotencyKey string) (engine.Session, bool, error) {
	if err := store.CheckNewSession(sess); err != nil {
		return engine.Session{}, false, err
	}
	sess = newSessionRow(sess)
	var out engine.Session
	created := false
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, created, err = createSessionTx(ctx, tx, sess, idempotencyKey)
		return err
	})
	if err != nil {
		return engine.Session{}, false, interpretError("create session "+sess.ID, err)
	}
	return out, created, nil
}

// newSessionRow is sess as CreateSession stores it.
func newSessionRow(sess engine.Session) engine.Session {
	sess.LastSeq = 0
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = sess.CreatedAt
	}
	if sess.Status == "" {
		sess.Status = engine.StatusIdle
	}
	return sess
}

// createSessionTx is CreateSession inside tx, on a checked newSessionRow.
func createSessionTx(ctx context.Context, tx *sql.Tx, sess engine.Session, idempotencyKey string) (out engine.Session, created bool, err error) {
	if idempotencyKey != "" {
		var ref string
		err := tx.QueryRowContext(ctx,
			`SELECT ref FROM idempotency_keys WHERE scope = ? AND key = ?`,
			scopeSession, idempotencyKey).Scan(&ref)
		switch {
		case err == nil:
			out, err = sessionByID(ctx, tx, ref)
			return out, false, err
		case !errors.Is(err, sql.ErrNoRows):
			return out, false, err
		}
	}
	if sess.ThreadKey != "" {
		existing, err := sessionWhere(ctx, tx, "thread_key = ?", sess.ThreadKey)
		switch {
		case err == nil:
			return existing, false, nil
		case !errors.Is(err, sql.ErrNoRows):
			return out, false, err
		}
	}

	_, err = tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionInsertColumns+`, last_input_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
		sess.ID, sess.Agent, sess.Origin, sess.ThreadKey, sess.Interactive, sess.StartedBy,
		string(sess.Status), formatTime(sess.CreatedAt), formatTime(sess.UpdatedAt),
		sess.LastSeq, sess.InputCursor, sess.Checkpoint,
		nullJSON(sess.Question), nullJSON(sess.Result), sess.StartedKey)
	if isConstraint(err) {
		return out, false, engine.Errorf(engine.CodeConflict, "session %s already exists", sess.ID)
	}
	if err != nil {
		return out, false, err
	}
	if idempotencyKey != "" {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO idempotency_keys (scope, key, ref, created_at) VALUES (?, ?, ?, ?)`,
			scopeSession, idempotencyKey, sess.ID, formatTime(sess.CreatedAt)); err != nil {
			return out, false, err
		}
	}
	// Read back so the caller gets exactly what Session will return.
	out, err = sessionByID(ctx, tx, sess.ID)
	return out, err == nil, err
}

// Session returns one session, or an error matching engine.ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (engine.Session, error) {
	sess, err := sessionWhere(ctx, s.read, "id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Session{}, notFound("session", id)
	}
	if err != nil {
		return engine.Session{}, fmt.Errorf("get session %s: %w", id, err)
	}
	return sess, nil
}

// SessionByKey returns the session CreateSession created with
// idempotencyKey, or an error matching engine.ErrNotFound.
func (s *Store) SessionByKey(ctx context.Context, idempotencyKey string) (engine.Session, error) {
	if idempotencyKey == "" {
		return engine.Session{}, notFound("idempotency key", `""`)
	}
	sess, err := sessionWhere(ctx, s.read,
		"id = (SELECT ref FROM idempotency_keys WHERE scope = ? AND key = ?)", scopeSession, idempotencyKey)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Session{}, notFound("idempotency key", idempotencyKey)
	}
	if err != nil {
		return engine.Session{}, fmt.Errorf("get session by idempotency key: %w", err)
	}
	return sess, nil
}

// SessionByThread returns the session bound to threadKey, or an error
// matching engine.ErrNotFound.
func (s *Store) SessionByThread(ctx context.Context, threadKey string) (engine.Session, error) {
	if threadKey == "" {
		return engine.Session{}, notFound("thread", `""`)
	}
	sess, err := sessionWhere(ctx, s.read, "thread_key = ?", threadKey)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Session{}, notFound("thread", threadKey)
	}
	if err != nil {
		return engine.Session{}, fmt.Errorf("get session by thread %s: %w", threadKey, err)
	}
	return sess, nil
}

// Sessions lists sessions newest first (created_at, then id, descending).
func (s *Store) Sessions(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error) {
	var (
		where []string
		args  []any
	)
	where, args = statusIn(where, args, f.Statuses)
	if f.PendingInput {
		// Same expression as the partial index sessions_pending_input.
		where = append(where, "last_input_seq > input_cursor")
	}
	out, err := listNewestFirst(ctx, s.read, sessionColumns, "sessions", where, args, f.Limit,
		func(r scanner) (engine.Session, error) { return scanSession(r) })
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// sessionByID loads a session inside a transaction, translating a missing
// row to engine.ErrNotFound.
func sessionByID(ctx context.Context, q queryer, id string) (engine.Session, error) {
	sess, err := sessionWhere(ctx, q, "id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Session{}, notFound("session", id)
	}
	return sess, err
}

// sessionWhere loads the one session matching cond; sql.ErrNoRows when none.
func sessionWhere(ctx context.Context, q queryer, cond string, args ...any) (engine.Session, error) {
	row := q.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE `+cond, args...)
	return scanSession(row)
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// scanSession reads sessionColumns, then any extra columns into extra.
func scanSession(r scanner, extra ...any) (engine.Session, error) {
	var (
		s                  engine.Session
		status             string
		created, updated   string
		question, resultJS []byte
	)
	dest := []any{&s.ID, &s.Agent, &s.Origin, &s.ThreadKey, &s.Interactive, &s.StartedBy, &status,
		&created, &updated, &s.LastSeq, &s.InputCursor, &s.Checkpoint, &question, &resultJS, &s.StartedKey,
		&s.ContextSeq, &s.UsageTotal.InputTokens, &s.UsageTotal.OutputTokens, &s.UsageTotal.CacheReadTokens, &s.UsageTotal.CacheWriteTokens}
	err := r.Scan(append(dest, extra...)...)
	if err != nil {
		return engine.Session{}, err
	}
	s.Status = engine.Status(status)
	if s.CreatedAt, err = parseTime(created); err != nil {
		return engine.Session{}, err
	}
	if s.UpdatedAt, err = parseTime(updated); err != nil {
		return engine.Session{}, err
	}
	s.Question = question
	s.Result = resultJS
	return s, nil
}

// statusIn adds a "status IN (...)" condition when statuses are given.
func statusIn[S ~string](where []string, args []any, statuses []S) ([]string, []any) {
	if len(statuses) == 0 {
		return where, args
	}
	marks := strings.Repeat("?, ", len(statuses))
	where = append(where, "status IN ("+marks[:len(marks)-2]+")")
	for _, st := range statuses {
		args = append(args, string(st))
	}
	return where, args
}

// listNewestFirst selects columns from table under the conditions, newest
// first (created_at, then id, descending), and scans each row.
func listNewestFirst[T any](ctx context.Context, q queryer, columns, table string, where []string, args []any, limit int, scan func(scanner) (T, error)) ([]T, error) {
	query := `SELECT ` + columns + ` FROM ` + table
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY created_at DESC, id DESC"
	if limit > 0 {
		query += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
