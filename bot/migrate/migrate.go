// Package migrate copies a brain database from SQLite into PostgreSQL
// (brain migrate --to postgres), for teams that start on the embedded
// store and outgrow one machine.
//
// It copies every table store/sqlite lists (sessions, events, idempotency
// keys, results, approvals, schedule runs, the inbox and its dedupe keys,
// channel delivery state, Linear tokens and install state, the agents'
// memory files, totals and history), row by row
// with the ids, sequence numbers and times they have, in one PostgreSQL
// transaction: the target gets the whole database or nothing, so a failed
// run can simply be run again. A table or column the target has no place
// for stops the copy: nothing is left out silently. The source is read in
// one snapshot, and the copy is checked by counting every table on both
// sides.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"brain/store/postgres"
	"brain/store/sqlite"
)

// Options say what to copy where.
type Options struct {
	// From is the SQLite file (brain.db). It must exist.
	From string
	// DSN is the PostgreSQL database (postgres:// URL or key=value); its
	// schema is created or brought up to date first.
	DSN string
	// Replace empties a target that already holds rows (in the same
	// transaction as the copy); without it such a target is refused.
	Replace bool
	// Out gets the table of counts; nil discards it.
	Out io.Writer
}

// Count is one table's rows in the source and in the target after the
// copy.
type Count struct {
	Table          string
	Source, Target int64
}

// ErrCountMismatch is returned when a table's rows in the target differ
// from the source's; the transaction is rolled back.
var ErrCountMismatch = errors.New("row counts differ")

// ToPostgres copies the database at opts.From into opts.DSN and returns
// the counts it checked, one per source table.
func ToPostgres(ctx context.Context, opts Options) ([]Count, error) {
	if opts.From == "" || opts.DSN == "" {
		return nil, errors.New("migrate: need a source file and a target dsn")
	}
	if _, err := os.Stat(opts.From); err != nil {
		// sqlite.Open would create an empty database.
		return nil, fmt.Errorf("migrate: source %w", err)
	}
	// Opening applies the source's pending migrations, as brain serve
	// would, so its tables are the ones this build knows.
	src, err := sqlite.Open(ctx, opts.From)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer dst.Close()

	snap, err := src.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer snap.Close()

	var counts []Count
	err = dst.Import(ctx, opts.Replace, func(ctx context.Context, im *postgres.Importer) error {
		var cerr error
		if counts, cerr = copyTables(ctx, snap, im); cerr != nil {
			return cerr
		}
		return checkCounts(counts)
	})
	if err != nil {
		if counts != nil && errors.Is(err, ErrCountMismatch) {
			printCounts(opts.Out, counts)
		}
		return counts, fmt.Errorf("migrate: %w", err)
	}
	// Counted again after the commit, from a fresh connection.
	if err := recount(ctx, dst, counts); err != nil {
		printCounts(opts.Out, counts)
		return counts, fmt.Errorf("migrate: after commit: %w", err)
	}
	printCounts(opts.Out, counts)
	return counts, nil
}

// step is one table to copy and the converters of its columns.
type step struct {
	src  sqlite.Table
	conv []convert
}

// plan pairs every source table with its target and its converters, in
// an order where a table comes after the tables its foreign keys point at.
// A source table or column the target has no place for fails it before
// anything is copied.
func plan(src []sqlite.Table, targets []postgres.Table) ([]step, error) {
	byName := map[string]postgres.Table{}
	for _, t := range targets {
		byName[t.Name] = t
	}
	steps := map[string]step{}
	for _, st := range src {
		t, ok := byName[st.Name]
		if !ok {
			return nil, fmt.Errorf("table %s has no counterpart in the target schema (is this brain older than the database?)", st.Name)
		}
		conv, err := converters(st, t)
		if err != nil {
			return nil, err
		}
		steps[st.Name] = step{src: st, conv: conv}
	}
	var order []step
	done := map[string]bool{}
	var visit func(name string, depth int) error
	visit = func(name string, depth int) error {
		if done[name] {
			return nil
		}
		if depth > len(targets) {
			return fmt.Errorf("foreign keys of %s form a cycle", name)
		}
		for _, ref := range byName[name].References {
			if err := visit(ref, depth+1); err != nil {
				return err
			}
		}
		done[name] = true
		if s, ok := steps[name]; ok {
			order = append(order, s)
		}
		return nil
	}
	for _, st := range src {
		if err := visit(st.Name, 0); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func copyTables(ctx context.Context, snap *sqlite.Snapshot, im *postgres.Importer) ([]Count, error) {
	steps, err := plan(snap.Tables(), im.Tables())
	if err != nil {
		return nil, err
	}
	var counts []Count
	for _, s := range steps {
		name := s.src.Name
		n, err := snap.Count(ctx, name)
		if err != nil {
			return nil, err
		}
		rows, err := snap.Rows(ctx, name)
		if err != nil {
			return nil, err
		}
		_, err = im.Copy(ctx, name, s.src.Columns, &converted{rows: rows, table: name, cols: s.src.Columns, conv: s.conv})
		rows.Close()
		if err != nil {
			return nil, err
		}
		got, err := im.Count(ctx, name)
		if err != nil {
			return nil, err
		}
		counts = append(counts, Count{Table: name, Source: n, Target: got})
	}
	return counts, nil
}

func checkCounts(counts []Count) error {
	var bad []string
	for _, c := range counts {
		if c.Source != c.Target {
			bad = append(bad, fmt.Sprintf("%s: %d in the source, %d in the target", c.Table, c.Source, c.Target))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %v", ErrCountMismatch, bad)
	}
	return nil
}

func recount(ctx context.Context, dst *postgres.Store, counts []Count) error {
	for i, c := range counts {
		n, err := dst.Count(ctx, c.Table)
		if err != nil {
			return err
		}
		counts[i].Target = n
	}
	return checkCounts(counts)
}

func printCounts(w io.Writer, counts []Count) {
	if w == nil {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tSQLITE\tPOSTGRES\t")
	for _, c := range counts {
		mark := "ok"
		if c.Source != c.Target {
			mark = "DIFFERS"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", c.Table, c.Source, c.Target, mark)
	}
	tw.Flush()
}
