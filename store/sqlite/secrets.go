package sqlite

import (
	"context"
	"fmt"

	"brain/store"
)

var _ store.Secrets = (*Store)(nil)

// SecretValues returns every non-empty stored credential. Table and column
// names come from store.SecretColumns, never from input.
func (s *Store) SecretValues(ctx context.Context) ([]store.SecretValue, error) {
	var out []store.SecretValue
	for _, col := range store.SecretColumns {
		rows, err := s.read.QueryContext(ctx,
			fmt.Sprintf(`SELECT %s, %s FROM %s WHERE %s <> '' ORDER BY %s`, col.Key, col.Column, col.Table, col.Column, col.Key))
		if err != nil {
			return nil, fmt.Errorf("list %s.%s: %w", col.Table, col.Column, err)
		}
		for rows.Next() {
			v := store.SecretValue{SecretColumn: col}
			if err := rows.Scan(&v.Row, &v.Stored); err != nil {
				rows.Close()
				return nil, fmt.Errorf("list %s.%s: %w", col.Table, col.Column, err)
			}
			out = append(out, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("list %s.%s: %w", col.Table, col.Column, err)
		}
	}
	return out, nil
}

// ReplaceSecret writes next where v still holds v.Stored.
func (s *Store) ReplaceSecret(ctx context.Context, v store.SecretValue, next string) (bool, error) {
	if !store.IsSecretColumn(v.SecretColumn) {
		return false, invariant("replace secret: %s.%s is not a secret column", v.Table, v.Column)
	}
	res, err := s.write.ExecContext(ctx,
		fmt.Sprintf(`UPDATE %s SET %s = ? WHERE %s = ? AND %s = ?`, v.Table, v.Column, v.Key, v.Column),
		next, v.Row, v.Stored)
	if err != nil {
		return false, fmt.Errorf("replace %s: %w", v.Context(), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("replace %s: %w", v.Context(), err)
	}
	return n == 1, nil
}
