// Package bulk fills a store's database with many sessions fast, for
// benchmarks and tests at scale (100,000 sessions): it copies one session
// that was made through the store's API, its events included, n times in
// one SQL statement per table, inside one transaction. The copies go
// through the database's own triggers, so the search tables index them as
// they would sessions the engine wrote.
//
// It is not a production path: it writes below the store's API, knows the
// two drivers' table names and is only as faithful as the template is.
package bulk

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Dialect is the SQL the database speaks.
type Dialect int

const (
	SQLite Dialect = iota
	Postgres
)

// CopySession adds n copies of session tmpl (its row and all its events)
// to db in one transaction. Copy i (1..n) has the id tmpl+"_"+i, its
// events' ids end in "_"+i, and every occurrence of word in its events'
// data becomes word+i, so each copy has a word of its own to search for
// (word "" changes nothing). The copies keep tmpl's creation time.
func CopySession(ctx context.Context, db *sql.DB, d Dialect, tmpl string, n int, word string) error {
	if n <= 0 {
		return nil
	}
	if strings.ContainsAny(tmpl+word, "'\\") {
		return fmt.Errorf("bulk: quote in %q or %q", tmpl, word)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bulk: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	suffix := func(col string) string { return col + " || '_' || n.i" }
	sessions := map[string]string{
		"id": suffix("t.id"),
		// The thread key is unique among sessions that have one.
		"thread_key":  "CASE WHEN t.thread_key = '' THEN '' ELSE " + suffix("t.thread_key") + " END",
		"started_key": "CASE WHEN t.started_key = '' THEN '' ELSE " + suffix("t.started_key") + " END",
	}
	events := map[string]string{
		"session_id": suffix("t.session_id"),
		"id":         suffix("t.id"),
	}
	if word != "" {
		events["data"] = "replace(t.data, '" + word + "', '" + word + "' || n.i)"
	}
	for _, c := range []struct {
		table, key string
		exprs      map[string]string
	}{{"sessions", "id", sessions}, {"events", "session_id", events}} {
		cols, err := columns(ctx, tx, d, c.table)
		if err != nil {
			return err
		}
		sel := make([]string, len(cols))
		for i, col := range cols {
			sel[i] = "t." + col
			if e, ok := c.exprs[col]; ok {
				sel[i] = e
			}
		}
		q := fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
			INSERT INTO %s (%s) SELECT %s FROM %s t CROSS JOIN n WHERE t.%s = '%s'`,
			n, c.table, strings.Join(cols, ", "), strings.Join(sel, ", "), c.table, c.key, tmpl)
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("bulk: copy %s: %w", c.table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bulk: %w", err)
	}
	// Fresh statistics, as autovacuum gathers after a large load in a
	// while: without them PostgreSQL plans the search over a table it
	// believes empty.
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("bulk: analyze: %w", err)
	}
	return nil
}

// columns lists a table's columns in declaration order.
func columns(ctx context.Context, tx *sql.Tx, d Dialect, table string) ([]string, error) {
	q := `SELECT name FROM pragma_table_info('` + table + `') ORDER BY cid`
	if d == Postgres {
		q = `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = '` + table + `' ORDER BY ordinal_position`
	}
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("bulk: columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("bulk: columns of %s: %w", table, err)
		}
		out = append(out, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bulk: columns of %s: %w", table, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bulk: no table %s", table)
	}
	return out, nil
}
