package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"brain/bot/config"
	"brain/bot/migrate"
	"brain/store/postgres"
)

// MigrateOptions are brain migrate's flags.
type MigrateOptions struct {
	// From is the SQLite file to copy; "" means the config's
	// data_dir/brain.db.
	From string
	// DSN is the PostgreSQL database to copy into; "" means the config's
	// storage.dsn when its driver is postgres.
	DSN string
	// Replace empties a target that already holds rows.
	Replace bool
	// Out gets the table of row counts.
	Out io.Writer
}

// MigrateToPostgres copies the SQLite database into PostgreSQL (see
// bot/migrate). It holds the data_dir's lock while it copies, so no brain
// serve or chat writes the file meanwhile: stop brain first.
func MigrateToPostgres(ctx context.Context, cfg *config.Config, opts MigrateOptions) error {
	from := opts.From
	if from == "" {
		if cfg == nil {
			return errors.New("migrate: give --from PATH or --config FILE (its data_dir holds brain.db)")
		}
		from = sqlitePath(cfg)
	}
	if opts.DSN == "" && cfg != nil && cfg.Storage.Driver == config.DriverPostgres {
		opts.DSN = cfg.Storage.DSN
	}
	if opts.DSN == "" {
		return errors.New("migrate: give the target with --dsn (or BRAIN_DATABASE_URL, or storage.dsn in the config)")
	}
	lock, err := lockDataDir(filepath.Dir(from))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer lock.Close()
	_, err = migrate.ToPostgres(ctx, migrate.Options{From: from, DSN: opts.DSN, Replace: opts.Replace, Out: opts.Out})
	if err != nil {
		return err
	}
	if opts.Out != nil {
		fmt.Fprintf(opts.Out, "copied %s into PostgreSQL; every table's rows match\n", from)
	}
	return nil
}

// ErrTargetNotEmpty is returned when the target already holds rows and
// Replace was not set.
var ErrTargetNotEmpty = postgres.ErrNotEmpty
