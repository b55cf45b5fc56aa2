package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"brain/store"
)

// RecordInbound stores items in one transaction (a group commit) and
// reports, per item, whether it was a duplicate of an earlier one (or of an
// earlier item of the same batch). Nothing is stored for duplicates.
//
// Every ack of the intake waits on this write, so it is made of few
// statements: the batch's rows go in with multi-row INSERTs and its keys
// with multi-row INSERT OR IGNOREs. When every key went in (no duplicate,
// by far the common case) that is all; otherwise settleDuplicates works out
// which items were duplicates, exactly as if they had been recorded one by
// one, and undoes their rows and keys.
func (s *Store) RecordInbound(ctx context.Context, now time.Time, items []store.Inbound) ([]bool, error) {
	var dup []bool
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		dup, err = recordBatch(ctx, tx, now, items)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record inbound: %w", err)
	}
	return dup, nil
}

// chunkRows are the row counts of the multi-row statements, largest first:
// each count is one statement text for the driver's statement cache, and
// a batch of n rows takes at most a few statements of each.
var chunkRows = [...]int{64, 16, 4, 1}

// chunk returns the largest chunk that fits n rows.
func chunk(n int) int {
	for _, c := range chunkRows {
		if c <= n {
			return c
		}
	}
	return 1
}

// multiRow returns head's multi-row INSERT text for each chunk size:
// "head VALUES (?, ...), (?, ...)" with cols placeholders a row.
func multiRow(head string, cols int) map[int]string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	out := make(map[int]string, len(chunkRows))
	for _, rows := range chunkRows {
		out[rows] = head + " VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
	}
	return out
}

// The statement texts by chunk size, built once (never written after).
var (
	insertInbox = multiRow(`INSERT INTO inbox (source, thread_key, kind, payload, created_at)`, 5)
	insertKeys  = multiRow(`INSERT OR IGNORE INTO inbox_keys (key, inbox_id, created_at)`, 3)
)

// recordBatch inserts items and their keys and reports the duplicates.
func recordBatch(ctx context.Context, tx *sql.Tx, now time.Time, items []store.Inbound) ([]bool, error) {
	at := formatTime(now)
	ids := make([]int64, len(items))
	nkeys := 0
	for off := 0; off < len(items); {
		n := chunk(len(items) - off)
		args := make([]any, 0, 5*n)
		for _, it := range items[off : off+n] {
			args = append(args, it.Source, it.ThreadKey, it.Kind, string(it.Payload), at)
			nkeys += len(it.DedupeKeys)
		}
		res, err := tx.ExecContext(ctx, insertInbox[n], args...)
		if err != nil {
			return nil, err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		// The rows went in in VALUES order and, the table being
		// AUTOINCREMENT and this the only writer, took consecutive ids.
		for i := range n {
			ids[off+i] = last - int64(n-1-i)
		}
		off += n
	}
	type keyRow struct {
		key string
		id  int64
	}
	keys := make([]keyRow, 0, nkeys)
	for i, it := range items {
		for _, k := range it.DedupeKeys {
			keys = append(keys, keyRow{k, ids[i]})
		}
	}
	var inserted int64
	for off := 0; off < len(keys); {
		n := chunk(len(keys) - off)
		args := make([]any, 0, 3*n)
		for _, k := range keys[off : off+n] {
			args = append(args, k.key, k.id, at)
		}
		res, err := tx.ExecContext(ctx, insertKeys[n], args...)
		if err != nil {
			return nil, err
		}
		m, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		inserted += m
		off += n
	}
	dup := make([]bool, len(items))
	if inserted == int64(len(keys)) {
		return dup, nil
	}
	return dup, settleDuplicates(ctx, tx, items, ids, dup)
}

// settleDuplicates runs when some key of the batch was already taken:
// by an earlier batch, by an earlier item of this one, or twice by one
// item. It reads who holds each key now, replays the one-by-one rule (an
// item whose key is held by an earlier item is a duplicate, and the keys
// it took before that one are free again), marks dup, deletes the
// duplicates' rows and gives each key the holder the replay says.
func settleDuplicates(ctx context.Context, tx *sql.Tx, items []store.Inbound, ids []int64, dup []bool) error {
	var all []any
	for _, it := range items {
		for _, k := range it.DedupeKeys {
			all = append(all, k)
		}
	}
	rows, err := tx.QueryContext(ctx,
		`SELECT key, inbox_id FROM inbox_keys WHERE key IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(all)), ", ")+`)`, all...)
	if err != nil {
		return err
	}
	stored := map[string]int64{}
	for rows.Next() {
		var k string
		var id int64
		if err := rows.Scan(&k, &id); err != nil {
			rows.Close()
			return err
		}
		stored[k] = id
	}
	if err := rows.Close(); err != nil {
		return err
	}
	first, last := ids[0], ids[len(ids)-1]
	ours := func(id int64) bool { return id >= first && id <= last }
	// holder is the replay: keys held before the batch, then each item's.
	holder := map[string]int64{}
	for k, id := range stored {
		if !ours(id) {
			holder[k] = id
		}
	}
	for i, it := range items {
		var claimed []string
		for _, k := range it.DedupeKeys {
			if h, ok := holder[k]; ok && h != ids[i] {
				dup[i] = true
				break
			}
			holder[k] = ids[i]
			claimed = append(claimed, k)
		}
		if dup[i] {
			for _, k := range claimed {
				delete(holder, k)
			}
		}
	}
	for i, d := range dup {
		if d {
			if _, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE id = ?`, ids[i]); err != nil {
				return err
			}
		}
	}
	for k, id := range stored {
		if !ours(id) {
			continue
		}
		want, ok := holder[k]
		switch {
		case !ok:
			if _, err := tx.ExecContext(ctx, `DELETE FROM inbox_keys WHERE key = ? AND inbox_id = ?`, k, id); err != nil {
				return err
			}
		case want != id:
			if _, err := tx.ExecContext(ctx, `UPDATE inbox_keys SET inbox_id = ? WHERE key = ?`, want, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// PendingInbound returns up to limit pending items, oldest first.
func (s *Store) PendingInbound(ctx context.Context, source string, limit int) ([]store.Inbound, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT id, source, thread_key, kind, payload, attempts, created_at FROM inbox
		 WHERE status = 'pending' AND source = ? ORDER BY id LIMIT ?`, source, limit)
	if err != nil {
		return nil, fmt.Errorf("pending inbound: %w", err)
	}
	defer rows.Close()
	var out []store.Inbound
	for rows.Next() {
		var (
			it      store.Inbound
			payload string
			created string
		)
		if err := rows.Scan(&it.ID, &it.Source, &it.ThreadKey, &it.Kind, &payload, &it.Attempts, &created); err != nil {
			return nil, fmt.Errorf("pending inbound: %w", err)
		}
		it.Payload = []byte(payload)
		if it.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("pending inbound: %w", err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// FinishInbound records the outcome of worked items in one transaction.
func (s *Store) FinishInbound(ctx context.Context, now time.Time, done []store.Finished) error {
	if len(done) == 0 {
		return nil
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		for _, d := range done {
			status := "done"
			if d.Err != "" {
				status = "failed"
			}
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET status = ?, error = ?, done_at = ?, attempts = attempts + 1 WHERE id = ?`,
				status, d.Err, formatTime(now), d.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish %d inbound items: %w", len(done), err)
	}
	return nil
}

// PruneInbound forgets dedupe keys and finished items older than before.
// Keys must outlive the platform's retry window (Slack: about 10 minutes).
func (s *Store) PruneInbound(ctx context.Context, before time.Time) error {
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM inbox_keys WHERE created_at < ?`, formatTime(before)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE status <> 'pending' AND created_at < ?`, formatTime(before))
		return err
	})
	if err != nil {
		return fmt.Errorf("prune inbound: %w", err)
	}
	return nil
}
