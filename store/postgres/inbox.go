package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

// RecordInbound stores items in one transaction (a group commit) and
// reports, per item, whether it was a duplicate of an earlier one (or of an
// earlier item of the same batch). Nothing is stored for duplicates.
//
// An item's keys are claimed by inserting them under a fresh inbox id
// (ON CONFLICT DO NOTHING); when any key was taken the item is a
// duplicate: the keys it did claim are deleted and no inbox row is
// written. Before that, the batch locks its keys (see lockKeys), so two
// processes recording the same events wait for each other key by key in
// one order instead of deadlocking on the unique index.
func (s *Store) RecordInbound(ctx context.Context, now time.Time, items []store.Inbound) ([]bool, error) {
	dup := make([]bool, len(items))
	if !sharedKeys(items) {
		if err := recordInboundRows(ctx, s.pool, now, items, dup); err != nil {
			return nil, interpretError("record inbound", err)
		}
		return dup, nil
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		if err := tx.SendBatch(ctx, lockBatch(items)).Close(); err != nil {
			return fmt.Errorf("lock keys: %w", err)
		}
		return recordInbound(ctx, tx, now, items, dup)
	})
	if err != nil {
		return nil, interpretError("record inbound", err)
	}
	return dup, nil
}

// inboxKeyLocks is the class of the advisory locks lockKeys takes (the
// two-number form, whose key space is apart from the one-number locks).
const inboxKeyLocks = 0x696e62 // "inb"

// lockBatch takes a transaction-scoped advisory lock per dedupe key of
// items, in ascending order of the key's hash: every batch locks in the
// same order, so batches sharing keys queue instead of deadlocking. Keys
// whose hashes collide share a lock, which only makes their batches wait.
// It is one statement (the function runs once per element of the sorted
// array, in its order); what the caller queues after it runs once the
// locks are held.
func lockBatch(items []store.Inbound) *pgx.Batch {
	var hashes []int32
	for _, it := range items {
		for _, k := range it.DedupeKeys {
			h := fnv.New32a()
			h.Write([]byte(k))
			hashes = append(hashes, int32(h.Sum32()))
		}
	}
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	batch := &pgx.Batch{}
	batch.Queue(`SELECT count(pg_advisory_xact_lock($1, h)) FROM unnest($2::int4[]) AS h`, int32(inboxKeyLocks), hashes)
	return batch
}

// sharedKeys reports whether two items of the batch share a dedupe key:
// then which of them is the duplicate depends on the order they are
// recorded in, item by item (recordInbound).
func sharedKeys(items []store.Inbound) bool {
	seen := map[string]int{}
	for i, it := range items {
		for _, k := range it.DedupeKeys {
			if j, ok := seen[k]; ok && j != i {
				return true
			}
			seen[k] = i
		}
	}
	return false
}

// recordInboundRows is recordInbound for a batch whose items share no
// key: the key locks and one statement, sent in one round trip as one
// implicit transaction (committed, durably, before the batch's results
// are read to the end), so a batch costs the server two statements and
// the intake one wait for PostgreSQL's backend to be scheduled, whatever
// its size. With the locks held no other batch can take these keys, so
// the statement reads which keys are taken, claims the keys of the items
// that have none taken and inserts their rows: a duplicate claims nothing
// and nothing is left to undo.
func recordInboundRows(ctx context.Context, db batcher, now time.Time, items []store.Inbound, dup []bool) error {
	n := len(items)
	sources, threads, kinds := make([]string, n), make([]string, n), make([]string, n)
	payloads := make([][]byte, n)
	var keys []string
	var keyOrd []int64
	for i, it := range items {
		sources[i], threads[i], kinds[i], payloads[i] = it.Source, it.ThreadKey, it.Kind, payload(it.Payload)
		for _, k := range slices.Compact(slices.Sorted(slices.Values(it.DedupeKeys))) {
			keys, keyOrd = append(keys, k), append(keyOrd, int64(i+1))
		}
	}
	batch := lockBatch(items)
	batch.Queue(`WITH item AS MATERIALIZED (
			SELECT ord, source, thread_key, kind, payload, nextval(pg_get_serial_sequence('inbox', 'id')) AS id
			FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[]) WITH ORDINALITY AS u(source, thread_key, kind, payload, ord)
		), key AS (
			SELECT k.key, item.id FROM unnest($5::text[], $6::bigint[]) AS k(key, ord) JOIN item USING (ord)
		), fresh AS MATERIALIZED (
			SELECT item.* FROM item
			WHERE NOT EXISTS (SELECT 1 FROM key JOIN inbox_keys USING (key) WHERE key.id = item.id)
		), claimed AS (
			INSERT INTO inbox_keys (key, inbox_id, created_at)
			SELECT key.key, key.id, $7::utc_time FROM key JOIN fresh USING (id)
		), ins AS (
			INSERT INTO inbox (id, source, thread_key, kind, payload, created_at)
			SELECT id, source, thread_key, kind, payload, $7::utc_time FROM fresh
		)
		SELECT item.ord, EXISTS (SELECT 1 FROM fresh WHERE fresh.id = item.id) FROM item ORDER BY item.ord`,
		sources, threads, kinds, payloads, keys, keyOrd, formatTime(now))
	br := db.SendBatch(ctx, batch)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return fmt.Errorf("lock keys: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	got := 0
	for rows.Next() {
		var ord int64
		var fresh bool
		if err := rows.Scan(&ord, &fresh); err != nil {
			rows.Close()
			br.Close()
			return err
		}
		if ord < 1 || ord > int64(n) {
			rows.Close()
			br.Close()
			return fmt.Errorf("record inbound: row %d of %d items", ord, n)
		}
		got++
		dup[ord-1] = !fresh
	}
	rows.Close()
	// Close reads to the end of the batch: its implicit transaction has
	// committed when it returns nil.
	if err := errors.Join(rows.Err(), br.Close()); err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("record inbound: %d outcomes for %d items", got, n)
	}
	return nil
}

// batcher sends a batch: the pool (one implicit transaction) or a
// transaction.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// recordInbound records items one at a time, in order.
func recordInbound(ctx context.Context, tx pgx.Tx, now time.Time, items []store.Inbound, dup []bool) error {
	at := formatTime(now)
	for i, it := range items {
		var id int64
		if err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('inbox', 'id'))`).Scan(&id); err != nil {
			return err
		}
		keys := slices.Compact(slices.Sorted(slices.Values(it.DedupeKeys)))
		if len(keys) > 0 {
			tag, err := tx.Exec(ctx, `INSERT INTO inbox_keys (key, inbox_id, created_at)
				SELECT k, $2::bigint, $3::utc_time FROM unnest($1::text[]) AS k ON CONFLICT (key) DO NOTHING`, keys, id, at)
			if err != nil {
				return err
			}
			if tag.RowsAffected() < int64(len(keys)) {
				dup[i] = true
				if _, err := tx.Exec(ctx, `DELETE FROM inbox_keys WHERE inbox_id = $1`, id); err != nil {
					return err
				}
				continue
			}
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO inbox (id, source, thread_key, kind, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			id, it.Source, it.ThreadKey, it.Kind, payload(it.Payload), at); err != nil {
			return err
		}
	}
	return nil
}

// payload stores absent bytes as empty (the column is NOT NULL).
func payload(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// PendingInbound returns up to limit pending items, oldest first; a
// negative limit means all (as SQLite's LIMIT -1).
func (s *Store) PendingInbound(ctx context.Context, source string, limit int) ([]store.Inbound, error) {
	var lim *int // NULL: LIMIT ALL
	if limit >= 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx,
		`SELECT id, source, thread_key, kind, payload, attempts, created_at FROM inbox
		 WHERE status = 'pending' AND source = $1 ORDER BY id LIMIT $2`, source, lim)
	if err != nil {
		return nil, fmt.Errorf("pending inbound: %w", err)
	}
	defer rows.Close()
	var out []store.Inbound
	for rows.Next() {
		var (
			it      store.Inbound
			created string
		)
		if err := rows.Scan(&it.ID, &it.Source, &it.ThreadKey, &it.Kind, &it.Payload, &it.Attempts, &created); err != nil {
			return nil, fmt.Errorf("pending inbound: %w", err)
		}
		if it.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("pending inbound: %w", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending inbound: %w", err)
	}
	return out, nil
}

// FinishInbound records the outcome of worked items in one transaction.
func (s *Store) FinishInbound(ctx context.Context, now time.Time, done []store.Finished) error {
	if len(done) == 0 {
		return nil
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		for _, d := range done {
			status := "done"
			if d.Err != "" {
				status = "failed"
			}
			batch.Queue(`UPDATE inbox SET status = $1, error = $2, done_at = $3, attempts = attempts + 1 WHERE id = $4`,
				status, d.Err, formatTime(now), d.ID)
		}
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return interpretError(fmt.Sprintf("finish %d inbound items", len(done)), err)
	}
	return nil
}

// PruneInbound forgets dedupe keys and finished items older than before.
// Keys must outlive the platform's retry window (Slack: about 10 minutes).
func (s *Store) PruneInbound(ctx context.Context, before time.Time) error {
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM inbox_keys WHERE created_at < $1`, formatTime(before)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM inbox WHERE status <> 'pending' AND created_at < $1`, formatTime(before))
		return err
	})
	if err != nil {
		return fmt.Errorf("prune inbound: %w", err)
	}
	return nil
}
