package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Column is one column of a table as the database declares it.
type Column struct {
	Name string
	// Type is the base type (information_schema's data_type: text,
	// bigint, integer, boolean, bytea); Domain names a domain over it
	// (utc_time), or is "".
	Type     string
	Domain   string
	Nullable bool
	// Identity marks a generated id; Import moves its sequence past the
	// copied ids.
	Identity bool
}

// Table is one table that holds data, its columns in declaration order.
type Table struct {
	Name    string
	Columns []Column
	// References are the tables this one's foreign keys point at: their
	// rows have to be there first.
	References []string
}

// Tables lists the tables of the schema that hold data, in name order,
// leaving out schema_migrations and the search tables triggers derive
// (derivedTables: the import's triggers rebuild them).
func (s *Store) Tables(ctx context.Context) ([]Table, error) {
	return tables(ctx, s.pool)
}

func tables(ctx context.Context, q querier) ([]Table, error) {
	rows, err := q.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type, COALESCE(c.domain_name, ''),
			c.is_nullable = 'YES', c.is_identity = 'YES'
		FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
			AND c.table_name <> 'schema_migrations' AND c.table_name NOT LIKE 'search\_%'
		ORDER BY c.table_name COLLATE "C", c.ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []Table
	for rows.Next() {
		var table string
		var c Column
		if err := rows.Scan(&table, &c.Name, &c.Type, &c.Domain, &c.Nullable, &c.Identity); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if n := len(out); n == 0 || out[n-1].Name != table {
			out = append(out, Table{Name: table})
		}
		out[len(out)-1].Columns = append(out[len(out)-1].Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	rows.Close()
	refs, err := q.Query(ctx, `SELECT DISTINCT c.conrelid::regclass::text, c.confrelid::regclass::text
		FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
		WHERE c.contype = 'f' AND n.nspname = current_schema() ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	defer refs.Close()
	for refs.Next() {
		var from, to string
		if err := refs.Scan(&from, &to); err != nil {
			return nil, fmt.Errorf("list foreign keys: %w", err)
		}
		if i := slices.IndexFunc(out, func(t Table) bool { return t.Name == from }); i >= 0 && from != to {
			out[i].References = append(out[i].References, to)
		}
	}
	if err := refs.Err(); err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	return out, nil
}

// ErrNotEmpty is returned by Import when the database already holds rows
// and replace was not asked for.
var ErrNotEmpty = errors.New("the target database is not empty")

// RowSource yields the rows Importer.Copy writes (pgx.CopyFromSource's
// shape): Next advances, Values is the current row, Err ends it.
type RowSource interface {
	Next() bool
	Values() ([]any, error)
	Err() error
}

// Importer writes whole tables inside Import's transaction.
type Importer struct {
	tx     pgx.Tx
	tables []Table
}

// Import runs fn in one transaction that commits only when fn returns nil:
// the database gets all of fn's rows or none of them. The database must
// hold no rows (ErrNotEmpty) unless replace is set; then every table is
// emptied first, in the same transaction. Identity sequences are moved past
// the copied ids before the commit.
func (s *Store) Import(ctx context.Context, replace bool, fn func(ctx context.Context, im *Importer) error) error {
	return s.writeTx(ctx, func(tx pgx.Tx) error {
		// Migrations and imports take turns: the schema is the one read.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return fmt.Errorf("import: lock: %w", err)
		}
		ts, err := tables(ctx, tx)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		im := &Importer{tx: tx, tables: ts}
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = pgx.Identifier{t.Name}.Sanitize()
		}
		if replace {
			// The derived tables reference sessions: emptied with them.
			names = append(names, derivedTables...)
			if _, err := tx.Exec(ctx, `TRUNCATE `+strings.Join(names, ", ")+` RESTART IDENTITY`); err != nil {
				return fmt.Errorf("import: empty the target: %w", err)
			}
		} else {
			var full []string
			for _, t := range ts {
				n, err := im.Count(ctx, t.Name)
				if err != nil {
					return err
				}
				if n > 0 {
					full = append(full, fmt.Sprintf("%s (%d rows)", t.Name, n))
				}
			}
			if len(full) > 0 {
				return fmt.Errorf("%w: %s", ErrNotEmpty, strings.Join(full, ", "))
			}
		}
		if err := fn(ctx, im); err != nil {
			return err
		}
		return im.moveSequences(ctx)
	})
}

// Tables is the schema Import read at its start.
func (im *Importer) Tables() []Table { return im.tables }

func (im *Importer) table(name string) (Table, error) {
	i := slices.IndexFunc(im.tables, func(t Table) bool { return t.Name == name })
	if i < 0 {
		return Table{}, fmt.Errorf("import: no table %q in the target", name)
	}
	return im.tables[i], nil
}

// Count is the number of rows table holds inside the transaction.
func (im *Importer) Count(ctx context.Context, table string) (int64, error) {
	t, err := im.table(table)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := im.tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{t.Name}.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("import: count %s: %w", t.Name, err)
	}
	return n, nil
}

// Copy writes rows into table's columns (COPY, so ids of identity columns
// are kept as given) and returns how many it wrote.
func (im *Importer) Copy(ctx context.Context, table string, columns []string, rows RowSource) (int64, error) {
	t, err := im.table(table)
	if err != nil {
		return 0, err
	}
	for _, c := range columns {
		if !slices.ContainsFunc(t.Columns, func(tc Column) bool { return tc.Name == c }) {
			return 0, fmt.Errorf("import: table %s has no column %q", t.Name, c)
		}
	}
	n, err := im.tx.CopyFrom(ctx, pgx.Identifier{t.Name}, columns, rows)
	if err != nil {
		return n, interpretError("import: copy "+t.Name, err)
	}
	return n, nil
}

// moveSequences sets each identity sequence to the largest copied id, so
// the next generated id follows it.
func (im *Importer) moveSequences(ctx context.Context) error {
	for _, t := range im.tables {
		for _, c := range t.Columns {
			if !c.Identity {
				continue
			}
			table, col := pgx.Identifier{t.Name}.Sanitize(), pgx.Identifier{c.Name}.Sanitize()
			_, err := im.tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), m, true)
				FROM (SELECT MAX(`+col+`) AS m FROM `+table+`) x WHERE m IS NOT NULL`, table, c.Name)
			if err != nil {
				return fmt.Errorf("import: move the %s.%s sequence: %w", t.Name, c.Name, err)
			}
		}
	}
	return nil
}

// Count is the number of rows in table (one of Tables).
func (s *Store) Count(ctx context.Context, table string) (int64, error) {
	ts, err := tables(ctx, s.pool)
	if err != nil {
		return 0, err
	}
	if !slices.ContainsFunc(ts, func(t Table) bool { return t.Name == table }) {
		return 0, fmt.Errorf("count: no table %q", table)
	}
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}
