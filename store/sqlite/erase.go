package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"brain/store"
)

// EraseAuthor rewrites the messages authors wrote and deletes the copies
// kept beside the log (store.Retention). Deleted pages are zeroed
// (secure_delete) and the write-ahead log truncated, so the old text is
// not left in the file either.
func (s *Store) EraseAuthor(ctx context.Context, authors []string, marker string) (store.Erased, error) {
	var out store.Erased
	if len(authors) == 0 {
		return out, nil
	}
	who := map[string]bool{}
	for _, a := range authors {
		who[a] = true
	}
	marks := "?" + strings.Repeat(", ?", len(authors)-1)
	args := make([]any, len(authors))
	for i, a := range authors {
		args[i] = a
	}
	err := s.scrubbed(ctx, func(tx *sql.Tx) error {
		out = store.Erased{}
		sessions, err := stringColumn(ctx, tx, `SELECT DISTINCT session_id FROM search_people WHERE person IN (`+marks+`)`, args...)
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
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_people WHERE person IN (`+marks+`)`, args...); err != nil {
			return fmt.Errorf("erase search people: %w", err)
		}
		// Platform deliveries as received carry the text; worked ones are
		// kept only for the record. A pending one is still to be run.
		for _, a := range authors {
			if _, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE status <> 'pending' AND instr(payload, ?) > 0`, a); err != nil {
				return fmt.Errorf("erase inbox: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM linear_parked_inbound WHERE instr(CAST(payload AS TEXT), ?) > 0`, a); err != nil {
				return fmt.Errorf("erase parked deliveries: %w", err)
			}
		}
		// Merge the full-text index's segments, so the words deleted
		// from it are gone from its pages too.
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_text (search_text) VALUES ('optimize')`); err != nil {
			return fmt.Errorf("erase: optimize search: %w", err)
		}
		return nil
	})
	if err != nil {
		return store.Erased{}, interpretError("erase author", err)
	}
	return out, nil
}

// scrubbed runs fn in a write transaction with deleted content zeroed
// (secure_delete), then truncates the write-ahead log, so what fn deleted
// is not left in the file's free pages or in old log frames.
func (s *Store) scrubbed(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if _, err := s.write.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return err
	}
	defer s.write.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = FAST`) //nolint:errcheck // back to the connection's setting (OpenWithOptions)
	if err := s.writeTx(ctx, fn); err != nil {
		return err
	}
	// Best effort: a reader holding an old snapshot keeps the log until it
	// ends; the next checkpoint writes over it.
	s.write.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`) //nolint:errcheck // see above
	return nil
}

// eraseInSession rewrites the messages of session id that who wrote, and
// rebuilds the session's search rows from what is left.
func eraseInSession(ctx context.Context, tx *sql.Tx, id string, who map[string]bool, marker string) (int, []string, error) {
	type row struct {
		seq  int64
		data string
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, data FROM events WHERE session_id = ? AND type = 'user.message' ORDER BY seq`, id)
	if err != nil {
		return 0, nil, fmt.Errorf("messages of %s: %w", id, err)
	}
	var msgs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.data); err != nil {
			rows.Close()
			return 0, nil, err
		}
		msgs = append(msgs, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, nil, fmt.Errorf("messages of %s: %w", id, err)
	}
	n := 0
	var files []string
	for _, m := range msgs {
		data, f, changed := store.EraseMessage([]byte(m.data), who, marker)
		if !changed {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE events SET data = ? WHERE session_id = ? AND seq = ?`, string(data), id, m.seq); err != nil {
			return 0, nil, fmt.Errorf("erase message %s/%d: %w", id, m.seq, err)
		}
		n++
		files = append(files, f...)
	}
	if n == 0 {
		return 0, nil, nil
	}
	return n, files, rebuildSearch(ctx, tx, id)
}

// rebuildSearch writes session id's search rows again, as the triggers
// would have from its row and its messages as they are now.
func rebuildSearch(ctx context.Context, tx *sql.Tx, id string) error {
	for _, q := range []string{
		`DELETE FROM search_text WHERE docid IN (SELECT docid FROM search_docs WHERE session_id = ?)`,
		`DELETE FROM search_docs WHERE session_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("rebuild search of %s: %w", id, err)
		}
	}
	bodies, err := stringColumn(ctx, tx, `SELECT agent || ' ' || started_by FROM sessions WHERE id = ?
		UNION ALL
		SELECT body FROM (SELECT coalesce(CAST(json_extract(data, '$.author') AS TEXT), '') || ' ' ||
			coalesce(CAST(json_extract(data, '$.text') AS TEXT), '') AS body
		FROM events WHERE session_id = ? AND type IN ('user.message', 'agent.message') AND json_valid(data) ORDER BY seq)`, id, id)
	if err != nil {
		return fmt.Errorf("rebuild search of %s: %w", id, err)
	}
	for _, b := range bodies {
		res, err := tx.ExecContext(ctx, `INSERT INTO search_text (session_id, body) VALUES (?, ?)`, id, b)
		if err != nil {
			return fmt.Errorf("rebuild search of %s: %w", id, err)
		}
		docid, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("rebuild search of %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_docs (session_id, docid) VALUES (?, ?)`, id, docid); err != nil {
			return fmt.Errorf("rebuild search of %s: %w", id, err)
		}
	}
	return nil
}

// EraseMemoryScopes deletes the memory scopes named (store.Retention).
func (s *Store) EraseMemoryScopes(ctx context.Context, scopes []string) (int, error) {
	var n int64
	err := s.scrubbed(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, sc := range scopes {
			res, err := tx.ExecContext(ctx, `DELETE FROM memory_files WHERE scope = ?`, sc)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
			if _, err := tx.ExecContext(ctx, `DELETE FROM memory_history WHERE scope = ?`, sc); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM memory_scopes WHERE scope = ?`, sc); err != nil {
				return err
			}
		}
		return nil
	})
	return int(n), interpretError("erase memory", err)
}

func stringColumn(ctx context.Context, q queryer, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
