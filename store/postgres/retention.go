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

var _ store.Retention = (*Store)(nil)

// PruneSessions deletes up to limit events of the expired sessions, oldest
// first, and the sessions left without events (store.Retention). Each
// session is locked while it goes, so a commit to it waits or wins: a
// session a commit made active again is left alone.
func (s *Store) PruneSessions(ctx context.Context, before time.Time, limit int) (store.SessionsPruned, error) {
	var out store.SessionsPruned
	if limit <= 0 {
		return out, nil
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		out = store.SessionsPruned{}
		// A batch a crash loses is deleted again by the next run: its
		// commit need not wait for the WAL flush, the turns' commits do.
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return fmt.Errorf("prune sessions: %w", err)
		}
		for left := limit; left > 0; {
			var id string
			err := tx.QueryRow(ctx, `SELECT id FROM sessions WHERE updated_at < $1 AND status <> $2
				ORDER BY updated_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`, formatTime(before), string(engine.StatusRunning)).Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("find expired session: %w", err)
			}
			tag, err := tx.Exec(ctx, `DELETE FROM events WHERE session_id = $1 AND seq IN
				(SELECT seq FROM events WHERE session_id = $1 ORDER BY seq LIMIT $2)`, id, left)
			if err != nil {
				return fmt.Errorf("delete events of %s: %w", id, err)
			}
			n := int(tag.RowsAffected())
			out.Events += n
			left -= n
			if left == 0 {
				var more bool
				if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE session_id = $1)`, id).Scan(&more); err != nil {
					return fmt.Errorf("events left of %s: %w", id, err)
				}
				if more {
					return nil
				}
			}
			if err := deleteSession(ctx, tx, id); err != nil {
				return err
			}
			out.Sessions = append(out.Sessions, id)
		}
		return nil
	})
	return out, interpretError("prune sessions", err)
}

// deleteSession deletes a session that has no events left, with what is
// kept about it. The schedule run that started it keeps its record.
func deleteSession(ctx context.Context, tx pgx.Tx, id string) error {
	for _, q := range []string{
		`DELETE FROM approval_messages WHERE approval_id IN (SELECT id FROM approvals WHERE session_id = $1)`,
		`DELETE FROM approvals WHERE session_id = $1`,
		`DELETE FROM results WHERE session_id = $1`,
		`DELETE FROM search_text WHERE session_id = $1`,
		`DELETE FROM search_people WHERE session_id = $1`,
		`DELETE FROM delivery_cursors WHERE session_id = $1`,
		`DELETE FROM posted_questions WHERE session_id = $1`,
		`DELETE FROM code_channels WHERE session_id = $1`,
		`DELETE FROM idempotency_keys WHERE scope = 'input:' || $1`,
		`DELETE FROM idempotency_keys WHERE scope = 'session' AND ref = $1`,
		`DELETE FROM sessions WHERE id = $1`,
	} {
		if _, err := tx.Exec(ctx, q, id); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	return nil
}

// Compact does nothing: autovacuum gives deleted rows' space back to
// PostgreSQL, which reuses it.
func (s *Store) Compact(context.Context, int) (int, bool, error) { return 0, true, nil }

// EraseAuthor rewrites the messages authors wrote and deletes the copies
// kept beside the log (store.Retention). The old row versions stay in the
// table files until (auto)vacuum removes them.
func (s *Store) EraseAuthor(ctx context.Context, authors []string, marker string) (store.Erased, error) {
	var out store.Erased
	if len(authors) == 0 {
		return out, nil
	}
	who := map[string]bool{}
	for _, a := range authors {
		who[a] = true
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		out = store.Erased{}
		sessions, err := stringColumn(ctx, tx, `SELECT DISTINCT session_id FROM search_people WHERE person = ANY($1) ORDER BY 1`, authors)
		if err != nil {
			return fmt.Errorf("sessions of %v: %w", authors, err)
		}
		for _, id := range sessions {
			n, files, err := eraseInSession(ctx, tx, id, who, marker)
			if err != nil {
				return err
			}
			if n > 0 {
				out.Sessions++
			}
			out.Messages += n
			out.Files = append(out.Files, files...)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM search_people WHERE person = ANY($1)`, authors); err != nil {
			return fmt.Errorf("erase search people: %w", err)
		}
		for _, a := range authors {
			if _, err := tx.Exec(ctx, `DELETE FROM inbox WHERE status <> 'pending' AND position($1::bytea in payload) > 0`, []byte(a)); err != nil {
				return fmt.Errorf("erase inbox: %w", err)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM linear_parked_inbound WHERE position($1::bytea in payload) > 0`, []byte(a)); err != nil {
				return fmt.Errorf("erase parked deliveries: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return store.Erased{}, interpretError("erase author", err)
	}
	return out, nil
}

// eraseInSession rewrites the messages of session id that who wrote, and
// rebuilds the session's search rows from what is left.
func eraseInSession(ctx context.Context, tx pgx.Tx, id string, who map[string]bool, marker string) (int, []string, error) {
	rows, err := tx.Query(ctx, `SELECT seq, data FROM events WHERE session_id = $1 AND type = 'user.message' ORDER BY seq FOR UPDATE`, id)
	if err != nil {
		return 0, nil, fmt.Errorf("messages of %s: %w", id, err)
	}
	type row struct {
		seq  int64
		data string
	}
	msgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var m row
		return m, r.Scan(&m.seq, &m.data)
	})
	if err != nil {
		return 0, nil, fmt.Errorf("messages of %s: %w", id, err)
	}
	n := 0
	var files []string
	for _, m := range msgs {
		data, f, changed := store.EraseMessage([]byte(m.data), who, marker)
		if !changed {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE events SET data = $1 WHERE session_id = $2 AND seq = $3`, string(data), id, m.seq); err != nil {
			return 0, nil, fmt.Errorf("erase message %s/%d: %w", id, m.seq, err)
		}
		n++
		files = append(files, f...)
	}
	if n == 0 {
		return 0, nil, nil
	}
	// The search rows again, as the triggers would have written them.
	for _, q := range []string{
		`DELETE FROM search_text WHERE session_id = $1`,
		`INSERT INTO search_text (session_id, body) SELECT id, to_tsvector('simple', agent || ' ' || started_by) FROM sessions WHERE id = $1`,
		`INSERT INTO search_text (session_id, body)
			SELECT session_id, to_tsvector('simple', coalesce(data::json->>'author', '') || ' ' || coalesce(data::json->>'text', ''))
			FROM events WHERE session_id = $1 AND type IN ('user.message', 'agent.message') AND data LIKE '{%'`,
	} {
		if _, err := tx.Exec(ctx, q, id); err != nil {
			return 0, nil, fmt.Errorf("rebuild search of %s: %w", id, err)
		}
	}
	return n, files, nil
}

// EraseMemoryScopes deletes the memory scopes named (store.Retention).
func (s *Store) EraseMemoryScopes(ctx context.Context, scopes []string) (int, error) {
	var n int64
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM memory_files WHERE scope = ANY($1)`, scopes)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		if _, err := tx.Exec(ctx, `DELETE FROM memory_history WHERE scope = ANY($1)`, scopes); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM memory_scopes WHERE scope = ANY($1)`, scopes)
		return err
	})
	return int(n), interpretError("erase memory", err)
}

func stringColumn(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, query string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
