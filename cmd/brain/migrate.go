package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"brain/bot"
	"brain/bot/config"
)

const migrateSynopsis = `brain migrate --to postgres [--config FILE | --from PATH] --dsn URL [--replace]

Copies a brain SQLite database (the config's data_dir/brain.db, or --from
PATH) into PostgreSQL (--dsn, or storage.dsn of a config whose driver is
postgres): sessions and their events, idempotency keys, results,
approvals, schedule runs, the Slack and Linear inboxes, channel delivery
state and Linear tokens. Stop brain first (the data_dir lock is taken).
The copy is one transaction: the target gets everything or nothing, so a
failed run can be run again. A target that already holds rows is refused
unless --replace (which empties it first, in the same transaction: stop
every replica using it). Every
table's rows are counted on both sides and printed; any difference fails.`

// migrateCmd is `brain migrate`.
func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, path := newFlags("migrate", migrateSynopsis, stderr)
	to := fs.String("to", "", "target store: postgres")
	from := fs.String("from", "", "SQLite file to copy (default: data_dir/brain.db of --config)")
	dsn := fs.String("dsn", os.Getenv("BRAIN_DATABASE_URL"), "PostgreSQL database to copy into (default $BRAIN_DATABASE_URL, else the config's storage.dsn)")
	replace := fs.Bool("replace", false, "empty a target that already holds rows, then copy")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to != "postgres" {
		fs.Usage()
		return fmt.Errorf("migrate: --to must be postgres (have %q)", *to)
	}
	if len(fs.Args()) > 0 {
		return fmt.Errorf("migrate: unexpected arguments %v", fs.Args())
	}
	var cfg *config.Config
	configSet := false
	fs.Visit(func(f *flag.Flag) { configSet = configSet || f.Name == "config" })
	if *from == "" || configSet {
		var err error
		if cfg, err = loadConfig(*path); err != nil {
			return err
		}
	}
	err := bot.MigrateToPostgres(ctx, cfg, bot.MigrateOptions{From: *from, DSN: *dsn, Replace: *replace, Out: stdout})
	if errors.Is(err, bot.ErrTargetNotEmpty) {
		return fmt.Errorf("%w (pass --replace to empty it first)", err)
	}
	return err
}
