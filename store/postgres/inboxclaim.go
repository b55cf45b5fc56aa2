package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

// ClaimInbound claims pending items in one transaction. The candidates are
// locked FOR UPDATE SKIP LOCKED, so replicas claiming at once take
// different items instead of queueing on each other; then the pending
// items of their threads are read, and store.InThreadOrder keeps only
// those whose earlier items are this owner's (an item another transaction
// locked reads as unclaimed, so it stops its thread: order holds even
// against claims not yet committed).
func (s *Store) ClaimInbound(ctx context.Context, source, owner string, now, until time.Time, limit int) ([]store.Inbound, error) {
	var out []store.Inbound
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		cands, err := scanInbound(tx.Query(ctx,
			`SELECT id, source, thread_key, kind, payload, attempts, created_at FROM inbox
			 WHERE status = 'pending' AND source = $1
			   AND (claimed_until IS NULL OR claimed_until <= $2 OR claimed_by = $3)
			 ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED`, source, formatTime(now), owner, limit))
		if err != nil || len(cands) == 0 {
			return err
		}
		threads := make([]string, 0, len(cands))
		for _, c := range cands {
			threads = append(threads, c.ThreadKey)
		}
		rows, err := tx.Query(ctx,
			`SELECT id, thread_key, claimed_by, claimed_until FROM inbox
			 WHERE status = 'pending' AND source = $1 AND thread_key = ANY($2) AND id <= $3 ORDER BY id`,
			source, threads, cands[len(cands)-1].ID)
		if err != nil {
			return err
		}
		var pending []store.PendingClaim
		for rows.Next() {
			var p store.PendingClaim
			var until *string
			if err := rows.Scan(&p.ID, &p.ThreadKey, &p.ClaimedBy, &until); err != nil {
				rows.Close()
				return err
			}
			if p.ClaimedUntil, err = parseOptionalTime(until); err != nil {
				rows.Close()
				return err
			}
			pending = append(pending, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		out = store.InThreadOrder(cands, pending, owner, now)
		ids := make([]int64, len(out))
		for i, it := range out {
			ids[i] = it.ID
		}
		_, err = tx.Exec(ctx, `UPDATE inbox SET claimed_by = $1, claimed_until = $2 WHERE id = ANY($3)`,
			owner, formatTime(until), ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim inbound: %w", err)
	}
	return out, nil
}

// scanInbound reads inbox rows of the PendingInbound columns.
func scanInbound(rows pgx.Rows, err error) ([]store.Inbound, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Inbound
	for rows.Next() {
		var (
			it      store.Inbound
			created string
		)
		if err := rows.Scan(&it.ID, &it.Source, &it.ThreadKey, &it.Kind, &it.Payload, &it.Attempts, &created); err != nil {
			return nil, err
		}
		if it.CreatedAt, err = parseTime(created); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}
