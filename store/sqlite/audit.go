package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"brain/store"
)

var _ store.Audit = (*Store)(nil)

// AppendAudit appends recs to the chain in one write transaction; the
// single writer connection (and SQLite's lock, for other processes on the
// file) makes the read of the head and the write of the next one atomic.
func (s *Store) AppendAudit(ctx context.Context, recs ...store.AuditRecord) ([]store.AuditEntry, error) {
	for _, r := range recs {
		if err := store.CheckAuditRecord(r); err != nil {
			return nil, err
		}
	}
	var out []store.AuditEntry
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = appendAuditTx(ctx, tx, recs)
		return err
	})
	if err != nil {
		return nil, interpretError("append audit", err)
	}
	return out, nil
}

// appendAuditTx chains recs after the head inside tx. Commits call it for
// the audit records of their events (store.AuditOfEvents).
func appendAuditTx(ctx context.Context, tx *sql.Tx, recs []store.AuditRecord) ([]store.AuditEntry, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	head, err := auditHead(ctx, tx)
	if err != nil {
		return nil, err
	}
	out := make([]store.AuditEntry, 0, len(recs))
	for _, r := range recs {
		if err := store.CheckAuditRecord(r); err != nil {
			return nil, err
		}
		e := store.NextAudit(head, r)
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_log (seq, at, actor, action, target, detail, prev, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			e.Seq, formatTime(e.At), e.Actor, e.Action, e.Target, string(e.Detail), e.Prev, e.Hash); err != nil {
			return nil, fmt.Errorf("insert audit entry %d: %w", e.Seq, err)
		}
		out = append(out, e)
		head = e
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_head (id, seq, at, hash) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, at = excluded.at, hash = excluded.hash`,
		head.Seq, formatTime(head.At), head.Hash); err != nil {
		return nil, fmt.Errorf("move audit head: %w", err)
	}
	return out, nil
}

func auditHead(ctx context.Context, q queryer) (store.AuditEntry, error) {
	var (
		e  store.AuditEntry
		at string
	)
	err := q.QueryRowContext(ctx, `SELECT seq, at, hash FROM audit_head WHERE id = 1`).Scan(&e.Seq, &at, &e.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return store.AuditEntry{Hash: store.AuditGenesis}, nil // nothing appended yet
	}
	if err != nil {
		return store.AuditEntry{}, fmt.Errorf("read audit head: %w", err)
	}
	if e.Seq == 0 {
		return store.AuditEntry{Hash: store.AuditGenesis}, nil
	}
	t, err := parseTime(at)
	if err != nil {
		return store.AuditEntry{}, err
	}
	e.At = t
	return e, nil
}

// AuditHead returns the newest entry (its full record while it is kept).
func (s *Store) AuditHead(ctx context.Context) (store.AuditEntry, error) {
	head, err := auditHead(ctx, s.read)
	if err != nil || head.Seq == 0 {
		return head, interpretError("audit head", err)
	}
	es, err := s.AuditEntries(ctx, store.AuditQuery{After: head.Seq - 1, Limit: 1})
	if err != nil {
		return store.AuditEntry{}, err
	}
	if len(es) == 1 && es[0].Seq == head.Seq {
		return es[0], nil
	}
	return head, nil
}

// AuditEntries returns entries in seq order.
func (s *Store) AuditEntries(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	where := []string{"seq > ?"}
	args := []any{q.After}
	if !q.From.IsZero() {
		where, args = append(where, "at >= ?"), append(args, formatTime(q.From))
	}
	if !q.To.IsZero() {
		where, args = append(where, "at < ?"), append(args, formatTime(q.To))
	}
	query := `SELECT seq, at, actor, action, target, detail, prev, hash FROM audit_log WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY seq`
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, interpretError("audit entries", err)
	}
	defer rows.Close()
	var out []store.AuditEntry
	for rows.Next() {
		var (
			e          store.AuditEntry
			at, detail string
		)
		if err := rows.Scan(&e.Seq, &at, &e.Actor, &e.Action, &e.Target, &detail, &e.Prev, &e.Hash); err != nil {
			return nil, interpretError("audit entries", err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, err
		}
		e.Detail = []byte(detail)
		out = append(out, e)
	}
	return out, interpretError("audit entries", rows.Err())
}

// PruneAudit deletes up to limit of the oldest entries before before.
func (s *Store) PruneAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		// Only a prefix of the chain goes, so what is kept still links:
		// an entry stamped late by a replica with a slow clock holds back
		// the ones after it.
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_log WHERE seq IN
			(SELECT seq FROM audit_log WHERE seq < COALESCE((SELECT MIN(seq) FROM audit_log WHERE at >= ?), 9223372036854775807)
			 ORDER BY seq LIMIT ?)`, formatTime(before), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), interpretError("prune audit", err)
}
