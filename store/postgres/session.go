package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

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
// The key is claimed by inserting it first: a concurrent call with the same
// key (from any process) waits on the unique index until this transaction
// ends, then finds the key taken and returns this session. The session row
// is inserted the same way against the thread key.
func (s *Store) CreateSession(ctx context.Context, sess engine.Session, idempotencyKey string) (engine.Session, bool, error) {
	if err := store.CheckNewSession(sess); err != nil {
		return engine.Session{}, false, err
	}
	out, created, err := s.createSession(ctx, newSessionRow(sess), idempotencyKey)
	if err != nil {
		return engine.Session{}, false, interpretError("create session "+sess.ID, err)
	}
	return out, created, nil
}

func (s *Store) createSession(ctx context.Context, sess engine.Session, idempotencyKey string) (engine.Session, bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return engine.Session{}, false, err
	}
	// Committed only when the session is created: an existing session is
	// returned with the transaction (and the key it claimed) rolled back.
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after Commit
	out, created, err := createSessionTx(ctx, tx, sess, idempotencyKey)
	if err != nil || !created {
		return out, false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return engine.Session{}, false, err
	}
	return out, true, nil
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

// createSessionTx is createSession inside tx, on a checked newSessionRow.
// When it finds the session existing (created false) it has written the
// key it claimed: the caller rolls tx (or its savepoint) back.
func createSessionTx(ctx context.Context, tx pgx.Tx, sess engine.Session, idempotencyKey string) (engine.Session, bool, error) {
	if idempotencyKey != "" {
		tag, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, ref, created_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT (scope, key) DO NOTHING`,
			scopeSession, idempotencyKey, sess.ID, formatTime(sess.CreatedAt))
		if err != nil {
			return engine.Session{}, false, err
		}
		if tag.RowsAffected() == 0 {
			existing, err := sessionWhere(ctx, tx,
				"id = (SELECT ref FROM idempotency_keys WHERE scope = $1 AND key = $2)", scopeSession, idempotencyKey)
			return existing, false, err
		}
	}

	// Returned as stored, so the caller gets exactly what Session will
	// return; no row when the thread key is bound already.
	out, err := scanSession(tx.QueryRow(ctx, `INSERT INTO sessions (`+sessionInsertColumns+`, last_input_seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 0)
		ON CONFLICT (thread_key) WHERE thread_key <> '' DO NOTHING
		RETURNING `+sessionColumns,
		sess.ID, sess.Agent, sess.Origin, sess.ThreadKey, sess.Interactive, sess.StartedBy,
		string(sess.Status), formatTime(sess.CreatedAt), formatTime(sess.UpdatedAt),
		sess.LastSeq, sess.InputCursor, sess.Checkpoint,
		nullJSON(sess.Question), nullJSON(sess.Result), sess.StartedKey))
	if isConstraint(err) {
		return engine.Session{}, false, engine.Errorf(engine.CodeConflict, "session %s already exists", sess.ID)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		existing, err := sessionWhere(ctx, tx, "thread_key = $1", sess.ThreadKey)
		return existing, false, err
	}
	if err != nil {
		return engine.Session{}, false, err
	}
	return out, true, nil
}

// Session returns one session, or an error matching engine.ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (engine.Session, error) {
	sess, err := sessionWhere(ctx, s.pool, "id = $1", id)
	if errors.Is(err, pgx.ErrNoRows) {
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
	sess, err := sessionWhere(ctx, s.pool,
		"id = (SELECT ref FROM idempotency_keys WHERE scope = $1 AND key = $2)", scopeSession, idempotencyKey)
	if errors.Is(err, pgx.ErrNoRows) {
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
	sess, err := sessionWhere(ctx, s.pool, "thread_key = $1", threadKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Session{}, notFound("thread", threadKey)
	}
	if err != nil {
		return engine.Session{}, fmt.Errorf("get session by thread %s: %w", threadKey, err)
	}
	return sess, nil
}

// Sessions lists sessions newest first (created_at, then id, descending).
func (s *Store) Sessions(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error) {
	var q conditions
	statusIn(&q, f.Statuses)
	if f.PendingInput {
		// Same expression as the partial index sessions_pending_input.
		q.add("last_input_seq > input_cursor")
	}
	out, err := listNewestFirst(ctx, s.pool, sessionColumns, "sessions", q, f.Limit,
		func(r pgx.Row) (engine.Session, error) { return scanSession(r) })
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// sessionWhere loads the one session matching cond; pgx.ErrNoRows when
// none.
func sessionWhere(ctx context.Context, q querier, cond string, args ...any) (engine.Session, error) {
	row := q.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE `+cond, args...)
	return scanSession(row)
}

// scanSession reads sessionColumns, then any extra columns into extra.
func scanSession(r pgx.Row, extra ...any) (engine.Session, error) {
	var (
		s                  engine.Session
		status             string
		created, updated   string
		question, resultJS *string
	)
	dest := []any{&s.ID, &s.Agent, &s.Origin, &s.ThreadKey, &s.Interactive, &s.StartedBy, &status,
		&created, &updated, &s.LastSeq, &s.InputCursor, &s.Checkpoint, &question, &resultJS, &s.StartedKey,
		&s.ContextSeq, &s.UsageTotal.InputTokens, &s.UsageTotal.OutputTokens, &s.UsageTotal.CacheReadTokens, &s.UsageTotal.CacheWriteTokens}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return engine.Session{}, err
	}
	var err error
	s.Status = engine.Status(status)
	if s.CreatedAt, err = parseTime(created); err != nil {
		return engine.Session{}, err
	}
	if s.UpdatedAt, err = parseTime(updated); err != nil {
		return engine.Session{}, err
	}
	s.Question = readJSON(question)
	s.Result = readJSON(resultJS)
	return s, nil
}

// conditions builds a WHERE clause with numbered parameters.
type conditions struct {
	where []string
	args  []any
}

// arg adds v as the next parameter and returns its placeholder.
func (c *conditions) arg(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

func (c *conditions) add(cond string) { c.where = append(c.where, cond) }

// statusIn adds a "status = ANY (...)" condition when statuses are given.
func statusIn[S ~string](c *conditions, statuses []S) {
	if len(statuses) == 0 {
		return
	}
	list := make([]string, len(statuses))
	for i, st := range statuses {
		list[i] = string(st)
	}
	c.add("status = ANY (" + c.arg(list) + ")")
}

// listNewestFirst selects columns from table under the conditions, newest
// first (created_at, then id, descending), and scans each row.
func listNewestFirst[T any](ctx context.Context, q querier, columns, table string, c conditions, limit int, scan func(pgx.Row) (T, error)) ([]T, error) {
	query := `SELECT ` + columns + ` FROM ` + table
	if len(c.where) > 0 {
		query += " WHERE " + strings.Join(c.where, " AND ")
	}
	query += " ORDER BY created_at DESC, id DESC"
	if limit > 0 {
		query += " LIMIT " + c.arg(limit)
	}
	rows, err := q.Query(ctx, query, c.args...)
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
