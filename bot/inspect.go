package bot

import (
	"context"
	"time"

	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
	"brain/store"
)

// ScheduleStatus and ScheduleRun are the scheduler's views of a schedule and
// of one run, named here so cmd/brain needs only bot.
type (
	ScheduleStatus = schedule.Status
	ScheduleRun    = schedule.Run
)

// Inspector reads sessions straight from the database, for the CLI. It takes
// no lock, so it works while brain serve runs (SQLite WAL allows readers;
// PostgreSQL any number of clients).
type Inspector struct {
	store inspected
}

// inspected is what the Inspector reads.
type inspected interface {
	engine.Store
	store.Runs
	store.LinearTokens
	Close() error
}

// OpenInspector opens the configured database for reading.
func OpenInspector(ctx context.Context, cfg *config.Config) (*Inspector, error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
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

// Schedules describes the configured schedules and their recorded runs, for
// the CLI; it works whether or not brain serve runs.
func (i *Inspector) Schedules(ctx context.Context, cfg *config.Config, now time.Time) ([]ScheduleStatus, error) {
	return schedule.Statuses(ctx, cfg, i.store, now)
}

// Close closes the database.
func (i *Inspector) Close() error { return i.store.Close() }
