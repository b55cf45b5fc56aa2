package bot

import (
	"context"
	"fmt"
	"path/filepath"

	"brain/bot/config"
	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/sqlite"
)

// The app asks its database for store.Store; what only some drivers can do
// is asserted as a capability (store.Replicated), never on a driver's type.
var (
	_ store.Store      = (*sqlite.Store)(nil)
	_ store.Replicated = (*postgres.Store)(nil)
)

// openStore opens the database the storage block names: data_dir/brain.db
// for SQLite, the dsn for PostgreSQL. Errors never quote the dsn (it may
// hold a password).
func openStore(ctx context.Context, cfg *config.Config) (store.Store, error) {
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
func replicaLeases(st store.Store) engine.Leases {
	if rs, ok := st.(store.Replicated); ok {
		return rs
	}
	return nil
}

// replicaPeers reaches the other replicas through the store they share;
// nil for a store one process owns.
func replicaPeers(st store.Store) engine.Peers {
	if rs, ok := st.(store.Replicated); ok {
		return rs
	}
	return nil
}
