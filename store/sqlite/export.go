package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Table is one table of the database and its columns in declaration order,
// as brain migrate copies it.
type Table struct {
	Name    string
	Columns []string
}

// Tables lists the tables that hold data, in name order, leaving out
// schema_migrations (the schema version is the store's own), SQLite's
// internal tables and the search tables triggers derive (the target's
// triggers rebuild them). brain migrate copies exactly these, so a table a future
// migration adds is copied, or refused loudly, never left out silently.
func (s *Store) Tables(ctx context.Context) ([]Table, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT name FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name <> 'schema_migrations'
		ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if !derivedTable(name) {
			names = append(names, name)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	tables := make([]Table, 0, len(names))
	for _, name := range names {
		cols, err := s.columns(ctx, name)
		if err != nil {
			return nil, err
		}
		tables = append(tables, Table{Name: name, Columns: cols})
	}
	return tables, nil
}

func (s *Store) columns(ctx context.Context, table string) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// SchemaVersion is the newest migration applied to the database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// Snapshot is a consistent read of the whole database: every Count and
// Rows call sees the same committed state, whatever writers do meanwhile
// (one read transaction; WAL keeps it apart from the writer).
type Snapshot struct {
	tx     *sql.Tx
	tables []Table
}

// Snapshot starts a consistent read; Close ends it.
func (s *Store) Snapshot(ctx context.Context) (*Snapshot, error) {
	tables, err := s.Tables(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	// A deferred read transaction takes its snapshot at the first read:
	// read now, so every later call sees this moment.
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		tx.Rollback() //nolint:errcheck // the read error is the one to report
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return &Snapshot{tx: tx, tables: tables}, nil
}

// Tables is what Store.Tables returned when the snapshot began.
func (sn *Snapshot) Tables() []Table { return sn.tables }

// Close ends the read transaction.
func (sn *Snapshot) Close() error { return sn.tx.Rollback() }

func (sn *Snapshot) table(name string) (Table, error) {
	i := slices.IndexFunc(sn.tables, func(t Table) bool { return t.Name == name })
	if i < 0 {
		return Table{}, fmt.Errorf("no table %q in the database", name)
	}
	return sn.tables[i], nil
}

// Count is the number of rows in table.
func (sn *Snapshot) Count(ctx context.Context, table string) (int64, error) {
	t, err := sn.table(table)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := sn.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(t.Name)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", t.Name, err)
	}
	return n, nil
}

// Rows reads every row of table, its columns in the order of
// Table.Columns, ordered by rowid (insertion order for the tables brain
// writes). Values are as SQLite stores them: int64, float64, string,
// []byte or nil.
func (sn *Snapshot) Rows(ctx context.Context, table string) (*Rows, error) {
	t, err := sn.table(table)
	if err != nil {
		return nil, err
	}
	quoted := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		quoted[i] = quoteIdent(c)
	}
	// WITHOUT ROWID tables have no rowid: their primary key orders them.
	order := "rowid"
	var withoutRowid bool
	if err := sn.tx.QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE name = ?`, t.Name).Scan(&withoutRowid); err != nil {
		return nil, fmt.Errorf("read %s: %w", t.Name, err)
	}
	if withoutRowid {
		order = "1"
	}
	rows, err := sn.tx.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+quoteIdent(t.Name)+` ORDER BY `+order)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t.Name, err)
	}
	return &Rows{rows: rows, table: t.Name, values: make([]any, len(t.Columns))}, nil
}

// Rows iterates the rows of one table: Next, then Values; Err once Next
// returns false; Close always.
type Rows struct {
	rows   *sql.Rows
	table  string
	values []any
	err    error
}

// Next advances to the next row and reads it.
func (r *Rows) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	ptrs := make([]any, len(r.values))
	for i := range r.values {
		ptrs[i] = &r.values[i]
	}
	if err := r.rows.Scan(ptrs...); err != nil {
		r.err = fmt.Errorf("read %s: %w", r.table, err)
		return false
	}
	return true
}

// Values is the current row; the slice is reused by the next Next.
func (r *Rows) Values() ([]any, error) { return r.values, nil }

// Err is the error that ended the iteration, if any.
func (r *Rows) Err() error {
	if r.err != nil {
		return r.err
	}
	if err := r.rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", r.table, err)
	}
	return nil
}

// Close releases the rows.
func (r *Rows) Close() error { return r.rows.Close() }

// quoteIdent quotes a table or column name read from the schema.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
