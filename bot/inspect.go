package bot

import (
	"context"
	"fmt"
	"path/filepath"

	"brain/bot/config"
	"brain/engine"
	"brain/store/sqlite"
)

// Inspector reads sessions straight from the database, for the CLI. It takes
// no lock, so it works while brain serve runs (SQLite WAL allows readers).
type Inspector struct {
	store *sqlite.Store
}

// OpenInspector opens the configured database for reading.
func OpenInspector(ctx context.Context, cfg *config.Config) (*Inspector, error) {
	path := filepath.Join(cfg.DataDir, "brain.db")
	st, err := sqlite.OpenWithOptions(ctx, path, sqlite.Options{Synchronous: cfg.Storage.Synchronous})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return &Inspector{store: st}, nil
}

// Sessions lists sessions, newest first.
func (i *Inspector) Sessions(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error) {
	return i.store.Sessions(ctx, f)
}

// Session returns one session and its events.
func (i *Inspector) Session(ctx context.Context, id string) (engine.Session, []engine.Event, error) {
	s, err := i.store.Session(ctx, id)
	if err != nil {
		return engine.Session{}, nil, err
	}
	evs, err := i.store.Events(ctx, id, 0, 0)
	return s, evs, err
}

// Close closes the database.
func (i *Inspector) Close() error { return i.store.Close() }
