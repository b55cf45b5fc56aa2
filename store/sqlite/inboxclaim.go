package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"brain/store"
)

// ClaimInbound claims pending items in one write transaction (the single
// writer keeps claims from racing), keeping each thread in order with
// store.InThreadOrder.
func (s *Store) ClaimInbound(ctx context.Context, source, owner string, now, until time.Time, limit int) ([]store.Inbound, error) {
	var out []store.Inbound
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		cands, err := scanInbound(tx.QueryContext(ctx,
			`SELECT id, source, thread_key, kind, payload, attempts, created_at FROM inbox
			 WHERE status = 'pending' AND source = ? AND (claimed_until <= ? OR claimed_by = ?)
			 ORDER BY id LIMIT ?`, source, formatTime(now), owner, limit))
		if err != nil || len(cands) == 0 {
			return err
		}
		threads := map[string]bool{}
		args := []any{source, cands[len(cands)-1].ID}
		for _, c := range cands {
			if !threads[c.ThreadKey] {
				threads[c.ThreadKey] = true
				args = append(args, c.ThreadKey)
			}
		}
		marks := strings.TrimSuffix(strings.Repeat("?,", len(threads)), ",")
		rows, err := tx.QueryContext(ctx,
			`SELECT id, thread_key, claimed_by, claimed_until FROM inbox
			 WHERE status = 'pending' AND source = ? AND id <= ? AND thread_key IN (`+marks+`) ORDER BY id`, args...)
		if err != nil {
			return err
		}
		var pending []store.PendingClaim
		for rows.Next() {
			var p store.PendingClaim
			var until string
			if err := rows.Scan(&p.ID, &p.ThreadKey, &p.ClaimedBy, &until); err != nil {
				rows.Close()
				return err
			}
			if until != "" {
				if p.ClaimedUntil, err = parseTime(until); err != nil {
					rows.Close()
					return err
				}
			}
			pending = append(pending, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		out = store.InThreadOrder(cands, pending, owner, now)
		for _, it := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET claimed_by = ?, claimed_until = ? WHERE id = ?`,
				owner, formatTime(until), it.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim inbound: %w", err)
	}
	return out, nil
}

// scanInbound reads inbox rows of the PendingInbound columns.
func scanInbound(rows *sql.Rows, err error) ([]store.Inbound, error) {
	if err != nil {
		return nil, err
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
			return nil, err
		}
		it.Payload = []byte(payload)
		if it.CreatedAt, err = parseTime(created); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}
