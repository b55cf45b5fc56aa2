// Package sqlite is the embedded store driver: store.Store on a single
// SQLite file (github.com/mattn/go-sqlite3) with embedded, versioned
// migrations. It passes store/storetest.
//
// It imports engine and store and nothing else of the project.
// database/sql and sqlite errors stop here (interpretError): callers see
// engine errors (ErrNotFound, ErrConflict), ErrInvariant for a call that
// broke the store's contract (a bug: shown as an internal error), or errors
// wrapped with the operation that failed.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"

	"brain/engine"
	"brain/store"
)

var (
	_ engine.Store       = (*Store)(nil)
	_ store.Threads      = (*Store)(nil)
	_ store.Inbox        = (*Store)(nil)
	_ store.Runs         = (*Store)(nil)
	_ store.ChannelState = (*Store)(nil)
)

// Options tune how the database file is opened. The zero value is the
// production default.
type Options struct {
	// Synchronous is PRAGMA synchronous: "full" (the default) makes every
	// commit durable across power loss; "normal" is faster and in WAL mode
	// can lose the last commits on power loss, never corrupt the file.
	Synchronous string
	// BusyTimeout is how long a statement waits for a lock held by another
	// process before failing. Default 5s.
	BusyTimeout time.Duration
	// MaxReadConns bounds the read pool. Default 4.
	MaxReadConns int
}

func (o Options) withDefaults() (Options, error) {
	switch strings.ToLower(o.Synchronous) {
	case "", "full":
		o.Synchronous = "FULL"
	case "normal":
		o.Synchronous = "NORMAL"
	default:
		return o, fmt.Errorf("sqlite options: synchronous %q: want \"full\" or \"normal\"", o.Synchronous)
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.MaxReadConns <= 0 {
		o.MaxReadConns = 4
	}
	return o, nil
}

// Store is a store.Store backed by one SQLite file, which one process owns
// (it has no store.Replicated capability). It is safe for concurrent use.
type Store struct {
	// write has exactly one connection: SQLite allows one writer at a time,
	// so queueing in database/sql is cheaper than SQLITE_BUSY retries.
	write *sql.DB
	// writer shares transactions on write among concurrent writes
	// (groupcommit.go).
	writer *groupWriter
	// read is a pool for queries; WAL lets them run beside the writer.
	read *sql.DB
	// checkpointed is when the retention job last checkpointed the log
	// (unix nanoseconds; retention.go).
	checkpointed atomic.Int64
}

// Open opens (creating if needed) the database at path with default options
// and applies pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWithOptions(ctx, path, Options{})
}

// OpenWithOptions is Open with tuning options.
func OpenWithOptions(ctx context.Context, path string, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("open sqlite: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}

	write, err := sql.Open("sqlite3", dsn(abs, opts, true))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	// Ping opens the file and switches it to WAL before the read pool
	// connects, so readers never see a rollback-journal database.
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}

	read, err := sql.Open("sqlite3", dsn(abs, opts, false))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	read.SetMaxOpenConns(opts.MaxReadConns)
	read.SetMaxIdleConns(opts.MaxReadConns)
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return &Store{write: write, writer: newGroupWriter(write), read: read}, nil
}

// dsn builds a file: URI so paths with '?' or '#' survive, plus the
// driver's per-connection settings (applied to every new connection).
func dsn(path string, opts Options, writer bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_stmt_cache_size", "32")
	if writer {
		// A file made now frees deleted pages on request (Compact); the
		// setting does nothing to a file that exists.
		q.Set("_auto_vacuum", "incremental")
		// Deleted or rewritten content is zeroed inside the pages being
		// written anyway (no extra I/O): a person's erasure leaves no old
		// copy of a row behind (EraseAuthor zeroes freed pages too).
		q.Set("_secure_delete", "FAST")
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", opts.Synchronous)
		// Take the write lock at BEGIN: a deferred transaction that reads
		// and then writes can fail with SQLITE_BUSY when another process
		// wrote in between, and busy_timeout cannot help it.
		q.Set("_txlock", "immediate")
	} else {
		q.Set("_query_only", "1")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// Close closes both connection pools.
func (s *Store) Close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}

// writeTx runs fn in an immediate transaction on the writer connection,
// shared with the writes made at the same time (groupcommit.go), and
// returns once that transaction committed (fn returned nil) or fn's writes
// were undone (fn's error). fn must not start another write.
func (s *Store) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.writer.run(ctx, fn)
}

// queryer is what both *sql.DB and *sql.Tx offer for reads.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// invariant reports a broken store contract (see engine.ErrInvariant).
func invariant(format string, args ...any) error {
	return fmt.Errorf("%w: %s", engine.ErrInvariant, fmt.Sprintf(format, args...))
}

func notFound(kind, id string) error {
	return &engine.Error{Code: engine.CodeNotFound, Message: fmt.Sprintf("%s %s not found", kind, id)}
}

// interpretError is the one place an error of SQLite or database/sql
// becomes the store contract's, with op naming what failed: an error
// what store.Passed names passes as it is;
// anything else is wrapped with op. A reused key is told apart where it
// happens (isConstraint), which names the record.
func interpretError(op string, err error) error {
	if err == nil {
		return nil
	}
	if passed := store.Passed(err); passed != nil {
		return passed
	}
	return fmt.Errorf("%s: %w", op, err)
}

// isConstraint reports whether err is a constraint violation (a reused
// primary or unique key), which callers turn into engine.ErrConflict.
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

// timeLayout is RFC 3339 with a fixed nine-digit fraction: the text sorts in
// time order and keeps every nanosecond (time.RFC3339Nano trims zeros).
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// nullJSON stores an absent JSON value (nil or empty) as NULL.
func nullJSON(b []byte) sql.NullString {
	if len(b) == 0 {
		return sql.NullString{}
	}
	return sql.NullString{String: string(b), Valid: true}
}

// objectJSON stores an absent JSON value as {} so the column is always a
// valid JSON document.
func objectJSON(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}
