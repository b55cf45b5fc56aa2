package postgres

import (
	"context"
	"fmt"
	"time"

	"brain/store"
)

var _ store.Spending = (*Store)(nil)

// RecordSpend appends one model call's spend.
func (s *Store) RecordSpend(ctx context.Context, r store.SpendRecord) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO spend (at, session_id, person, channel, agent, schedule, tokens, cost_micro)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		formatTime(r.At), r.SessionID, r.Person, r.Channel, r.Agent, r.Schedule, r.Tokens, store.Micros(r.Cost))
	return interpretError("record spend", err)
}

// SpentSince sums subject's spend in scope since since.
func (s *Store) SpentSince(ctx context.Context, scope, subject string, since time.Time) (int64, float64, error) {
	col, err := store.SpendColumn(scope)
	if err != nil {
		return 0, 0, err
	}
	var tokens, micros int64
	err = s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT COALESCE(SUM(tokens), 0)::bigint, COALESCE(SUM(cost_micro), 0)::bigint
		FROM spend WHERE %s = $1 AND %s <> '' AND at >= $2`, col, col), subject, formatTime(since)).Scan(&tokens, &micros)
	return tokens, store.Dollars(micros), interpretError("spent since", err)
}

// SetBudgetLimit records l, replacing the one for its budget.
func (s *Store) SetBudgetLimit(ctx context.Context, l store.BudgetLimit) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO budget_limits (scope, subject, period, tokens, cost_micro, set_by, reason, set_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (scope, subject, period) DO UPDATE SET tokens = excluded.tokens, cost_micro = excluded.cost_micro,
			set_by = excluded.set_by, reason = excluded.reason, set_at = excluded.set_at`,
		l.Scope, l.Subject, l.Period, l.Tokens, store.Micros(l.Cost), l.SetBy, l.Reason, formatTime(l.SetAt))
	return interpretError("set budget limit", err)
}

// BudgetLimits lists the limits admins set.
func (s *Store) BudgetLimits(ctx context.Context) ([]store.BudgetLimit, error) {
	rows, err := s.pool.Query(ctx, `SELECT scope, subject, period, tokens, cost_micro, set_by, reason, set_at
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

// MarkNotice records key once; later calls, on any replica, report false.
func (s *Store) MarkNotice(ctx context.Context, key string, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO budget_notices (key, sent_at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
		key, formatTime(at))
	if err != nil {
		return false, interpretError("mark notice", err)
	}
	return tag.RowsAffected() == 1, nil
}

// PruneSpend deletes up to limit spend records older than before.
func (s *Store) PruneSpend(ctx context.Context, before time.Time, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM spend WHERE id IN (SELECT id FROM spend WHERE at < $1 ORDER BY id LIMIT $2)`,
		formatTime(before), limit)
	if err != nil {
		return 0, interpretError("prune spend", err)
	}
	return int(tag.RowsAffected()), nil
}
