package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"brain/store"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// loadMigrations returns the embedded migrations ordered by version.
func loadMigrations() ([]store.Migration, error) {
	return store.LoadMigrations(migrationFiles, "migrations")
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
		todo, err := store.PendingMigrations(ms, applied)
		if err != nil {
			return err
		}
		for _, m := range todo {
			// No arguments: the simple protocol runs every statement of
			// the file.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migrate %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("migrate %s: record version: %w", m.Name, err)
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
