package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"brain/store"
)

var _ store.Spending = (*Store)(nil)

// RecordSpend appends one model call's spend.
func (s *Store) RecordSpend(ctx context.Context, r store.SpendRecord) error {
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO spend (at, session_id, person, channel, agent, schedule, tokens, cost_micro)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			formatTime(r.At), r.SessionID, r.Person, r.Channel, r.Agent, r.Schedule, r.Tokens, store.Micros(r.Cost))
		return err
	})
	return interpretError("record spend", err)
}

// SpentSince sums subject's spend in scope since since.
func (s *Store) SpentSince(ctx context.Context, scope, subject string, since time.Time) (int64, float64, error) {
	col, err := store.SpendColumn(scope)
	if err != nil {
		return 0, 0, err
	}
	var tokens, micros int64
	err = s.read.QueryRowContext(ctx, fmt.Sprintf(`SELECT COALESCE(SUM(tokens), 0), COALESCE(SUM(cost_micro), 0)
		FROM spend WHERE %s = ? AND %s <> '' AND at >= ?`, col, col), subject, formatTime(since)).Scan(&tokens, &micros)
	return tokens, store.Dollars(micros), interpretError("spent since", err)
}

// SetBudgetLimit records l, replacing the one for its budget.
func (s *Store) SetBudgetLimit(ctx context.Context, l store.BudgetLimit) error {
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO budget_limits (scope, subject, period, tokens, cost_micro, set_by, reason, set_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (scope, subject, period) DO UPDATE SET tokens = excluded.tokens, cost_micro = excluded.cost_micro,
				set_by = excluded.set_by, reason = excluded.reason, set_at = excluded.set_at`,
			l.Scope, l.Subject, l.Period, l.Tokens, store.Micros(l.Cost), l.SetBy, l.Reason, formatTime(l.SetAt))
		return err
	})
	return interpretError("set budget limit", err)
}

// BudgetLimits lists the limits admins set.
func (s *Store) BudgetLimits(ctx context.Context) ([]store.BudgetLimit, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT scope, subject, period, tokens, cost_micro, set_by, reason, set_at
		FROM budget_limits ORDER BY scope, subject, period`)
	if err != nil {
		return nil, interpretError("budget limits", err)
	}
	defer rows.Close()
	var out []store.BudgetLimit
	for rows.Next() {
		var (
			l      store.BudgetLimit
			at     string
			micros int64
		)
		if err := rows.Scan(&l.Scope, &l.Subject, &l.Period, &l.Tokens, &micros, &l.SetBy, &l.Reason, &at); err != nil {
			return nil, interpretError("budget limits", err)
		}
		l.Cost = store.Dollars(micros)
		if l.SetAt, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, interpretError("budget limits", rows.Err())
}

// MarkNotice records key once; later calls report false.
func (s *Store) MarkNotice(ctx context.Context, key string, at time.Time) (bool, error) {
	var n int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO budget_notices (key, sent_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`,
			key, formatTime(at))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, interpretError("mark notice", err)
}

// PruneSpend deletes up to limit spend records older than before.
func (s *Store) PruneSpend(ctx context.Context, before time.Time, limit int) (int, error) {
	var n int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM spend WHERE id IN (SELECT id FROM spend WHERE at < ? ORDER BY id LIMIT ?)`,
			formatTime(before), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), interpretError("prune spend", err)
}
