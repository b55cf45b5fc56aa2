package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded file, named NNNN_description.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations ordered by version.
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	ms := make([]migration, 0, len(names))
	seen := make(map[int]string)
	for _, name := range names {
		base := path.Base(name)
		prefix, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		v, err := strconv.Atoi(prefix)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive version", base)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migration %s: version %d already used by %s", base, v, other)
		}
		seen[v] = base
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrateLock is the key of the advisory lock migrations hold: brain
// processes starting together on one database take turns, so each
// migration is applied once. Any fixed number works; this one is "brain".
const migrateLock = 0x627261696e

// migrate applies the pending migrations in version order, all in one
// transaction: the schema moves to the newest version or stays where it
// was (PostgreSQL's DDL is transactional).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Held until the transaction ends; taken before schema_migrations
		// is created, since two CREATE TABLE IF NOT EXISTS can still
		// collide.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer NOT NULL PRIMARY KEY,
			name    text    NOT NULL
		)`); err != nil {
			return fmt.Errorf("migrate: create schema_migrations: %w", err)
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		todo, err := pending(ms, applied)
		if err != nil {
			return err
		}
		for _, m := range todo {
			// No arguments: the simple protocol runs every statement of
			// the file.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("migrate %s: record version: %w", m.name, err)
			}
		}
		return nil
	})
}

// appliedVersions reads the versions recorded in schema_migrations.
func appliedVersions(ctx context.Context, tx pgx.Tx) (map[int]bool, error) {
	rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("migrate: read versions: %w", err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("migrate: read versions: %w", err)
	}
	applied := map[int]bool{}
	for _, v := range vs {
		applied[v] = true
	}
	return applied, nil
}

// pending is the migrations not applied yet, in version order. Every one
// missing is applied, not only those above the highest applied: versions
// need not be consecutive, and a build may bring one numbered below a
// version the database already has. A version this build does not know
// means a newer build wrote the schema, and an older one must not write to
// it.
func pending(ms []migration, applied map[int]bool) ([]migration, error) {
	known := map[int]bool{}
	var todo []migration
	for _, m := range ms {
		known[m.version] = true
		if !applied[m.version] {
			todo = append(todo, m)
		}
	}
	for v := range applied {
		if !known[v] {
			return nil, fmt.Errorf("migrate: database schema version %d is newer than this build (it does not know that migration)", v)
		}
	}
	return todo, nil
}
