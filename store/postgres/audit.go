package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
)

var _ store.Audit = (*Store)(nil)

// AppendAudit appends recs to the chain in one transaction. The head row
// is locked (FOR UPDATE) before it is read, so appenders on every replica
// take turns and the chain never forks.
func (s *Store) AppendAudit(ctx context.Context, recs ...store.AuditRecord) ([]store.AuditEntry, error) {
	for _, r := range recs {
		if err := store.CheckAuditRecord(r); err != nil {
			return nil, err
		}
	}
	var out []store.AuditEntry
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = appendAuditTx(ctx, tx, recs)
		return err
	})
	if err != nil {
		return nil, interpretError("append audit", err)
	}
	return out, nil
}

// appendAuditTx chains recs after the head inside tx, holding the head's
// lock until tx ends. Commits call it last (after the session's lock), so
// locks are always taken in one order.
func appendAuditTx(ctx context.Context, tx pgx.Tx, recs []store.AuditRecord) ([]store.AuditEntry, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	// The head row is written by the first append ever; until then there
	// is nothing to lock, so make it (a concurrent maker waits, then does
	// nothing) and lock it.
	if _, err := tx.Exec(ctx, `INSERT INTO audit_head (id, seq, at, hash) VALUES (1, 0, $1, $2) ON CONFLICT (id) DO NOTHING`,
		formatTime(time.Time{}), store.AuditGenesis); err != nil {
		return nil, fmt.Errorf("make audit head: %w", err)
	}
	head, err := auditHead(ctx, tx, " FOR UPDATE")
	if err != nil {
		return nil, err
	}
	out := make([]store.AuditEntry, 0, len(recs))
	batch := &pgx.Batch{}
	for _, r := range recs {
		if err := store.CheckAuditRecord(r); err != nil {
			return nil, err
		}
		e := store.NextAudit(head, r)
		batch.Queue(`INSERT INTO audit_log (seq, at, actor, action, target, detail, prev, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			e.Seq, formatTime(e.At), e.Actor, e.Action, e.Target, string(e.Detail), e.Prev, e.Hash)
		out = append(out, e)
		head = e
	}
	batch.Queue(`UPDATE audit_head SET seq = $1, at = $2, hash = $3 WHERE id = 1`, head.Seq, formatTime(head.At), head.Hash)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("append audit entries: %w", err)
	}
	return out, nil
}

func auditHead(ctx context.Context, q querier, lock string) (store.AuditEntry, error) {
	var (
		e  store.AuditEntry
		at string
	)
	err := q.QueryRow(ctx, `SELECT seq, at, hash FROM audit_head WHERE id = 1`+lock).Scan(&e.Seq, &at, &e.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
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
	head, err := auditHead(ctx, s.pool, "")
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
	where := []string{"seq > $1"}
	args := []any{q.After}
	if !q.From.IsZero() {
		args = append(args, formatTime(q.From))
		where = append(where, fmt.Sprintf("at >= $%d", len(args)))
	}
	if !q.To.IsZero() {
		args = append(args, formatTime(q.To))
		where = append(where, fmt.Sprintf("at < $%d", len(args)))
	}
	query := `SELECT seq, at, actor, action, target, detail, prev, hash FROM audit_log WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY seq`
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := s.pool.Query(ctx, query, args...)
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

// PruneAudit deletes up to limit of the oldest entries before before. Only
// a prefix of the chain goes, so what is kept still links: an entry
// stamped late by a replica with a slow clock holds back the ones after it.
func (s *Store) PruneAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM audit_log WHERE seq IN
		(SELECT seq FROM audit_log WHERE seq < COALESCE((SELECT MIN(seq) FROM audit_log WHERE at >= $1), 9223372036854775807)
		 ORDER BY seq LIMIT $2)`, formatTime(before), limit)
	if err != nil {
		return 0, interpretError("prune audit", err)
	}
	return int(tag.RowsAffected()), nil
}
