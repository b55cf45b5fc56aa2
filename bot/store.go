package bot

import (
	"context"
	"fmt"
	"path/filepath"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/durable"
	"brain/store/postgres"
	"brain/store/sqlite"
)

// Store is everything the app asks of its database: the engine's store and
// the records the bridges, the scheduler, readiness and metrics keep.
// store/sqlite and store/postgres both have it.
type Store interface {
	engine.Store
	durable.Threads
	durable.Inbox
	durable.Runs
	durable.ChannelState
	durable.LinearTokens
	durable.Health
	engine.Leases
	Close() error
}

var (
	_ Store = (*sqlite.Store)(nil)
	_ Store = (*postgres.Store)(nil)
)

// openStore opens the database the storage block names: data_dir/brain.db
// for SQLite, the dsn for PostgreSQL. Errors never quote the dsn (it may
// hold a password).
func openStore(ctx context.Context, cfg *config.Config) (Store, error) {
	switch cfg.Storage.Driver {
	case config.DriverPostgres:
		st, err := postgres.Open(ctx, cfg.Storage.DSN)
		if err != nil {
			return nil, fmt.Errorf("open database (storage.dsn): %w", err)
		}
		return st, nil
	default:
		path := sqlitePath(cfg)
		st, err := sqlite.OpenWithOptions(ctx, path, sqlite.Options{Synchronous: cfg.Storage.Synchronous})
		if err != nil {
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
		return st, nil
	}
}

// sqlitePath is where the SQLite database lives.
func sqlitePath(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "brain.db") }

// usesFileLock reports whether the store is one process's own file, which
// brain.lock guards; replicas on PostgreSQL share the database instead.
func usesFileLock(cfg *config.Config) bool { return cfg.Storage.Driver != config.DriverPostgres }

// replicaLeases returns the store's leases when replicas share it, nil
// (the engine keeps leases in memory) when this process owns it alone.
func replicaLeases(cfg *config.Config, st Store) engine.Leases {
	if usesFileLock(cfg) {
		return nil
	}
	return st
}

// replicaPeers reaches the other replicas through PostgreSQL; nil for a
// store one process owns.
func replicaPeers(st Store) engine.Peers {
	if pg, ok := st.(*postgres.Store); ok {
		return pg
	}
	return nil
}
