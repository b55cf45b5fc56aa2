// Package postgres is the replicas' store driver: store.Store and the
// store.Replicated capability on PostgreSQL (github.com/jackc/pgx/v5), with
// embedded, versioned migrations. It passes store/storetest. Several brain
// processes may share one database:
// every write that reads before it writes locks the row it depends on
// (SELECT ... FOR UPDATE) or relies on a unique key, so what store/sqlite
// gets from its single writer holds across processes here.
//
// It imports engine and store and nothing else of the project.
// pgx errors stop here (interpretError): callers see engine errors (ErrNotFound,
// ErrConflict), ErrInvariant for a call that broke the store's contract (a
// bug: shown as an internal error), or errors wrapped with the operation
// that failed.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

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

// Store is a store.Store with the store.Replicated capability, backed by
// one PostgreSQL database. It is safe for concurrent use, and other
// processes may use the same database at the same time.
type Store struct {
	pool *pgxpool.Pool
}

// Open connects to the database at dsn (a postgres:// URL or a libpq
// key=value string, as pgx accepts) and applies pending migrations.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if dsn == "" {
		return nil, errors.New("open postgres: empty dsn")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the dsn, password included.
		return nil, errors.New("open postgres: cannot parse the dsn")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Close closes the connection pool, waiting for queries in flight.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// querier is what both the pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// writeTx runs fn in a read-committed transaction and commits it when fn
// returns nil. Rows fn depends on are locked by fn (FOR UPDATE), not by the
// isolation level.
func (s *Store) writeTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	// Deferred so it also runs when fn panics (Commit.Update is caller
	// code); after Commit it is a no-op. A rollback that fails closes the
	// connection, which ends the transaction as well.
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // the error from fn or Commit is the one to report
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// invariant reports a broken store contract (see engine.ErrInvariant).
func invariant(format string, args ...any) error {
	return fmt.Errorf("%w: %s", engine.ErrInvariant, fmt.Sprintf(format, args...))
}

func notFound(kind, id string) error {
	return &engine.Error{Code: engine.CodeNotFound, Message: fmt.Sprintf("%s %s not found", kind, id)}
}

// SQLSTATE codes the store tells apart.
const (
	codeUniqueViolation = "23505"
	codeBadEncoding     = "22021" // invalid UTF-8, or a NUL byte, in text
)

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// isConstraint reports whether err is a reused primary or unique key,
// which callers turn into engine.ErrConflict.
func isConstraint(err error) bool { return sqlState(err) == codeUniqueViolation }

// interpretError is the one place an error of PostgreSQL or pgx becomes
// the store contract's, with op naming what failed: an error already in
// the contract's terms or an Update's (store.Passed) passes as it is; text
// PostgreSQL refuses to keep at all (invalid UTF-8 or a NUL byte; SQLite
// would have kept the bytes, the engine never writes such text) is
// engine.ErrInvariant; anything else is wrapped with op. A reused key is
// told apart where it happens (isConstraint), which names the record.
func interpretError(op string, err error) error {
	if err == nil {
		return nil
	}
	if passed := store.Passed(err); passed != nil {
		return passed
	}
	if sqlState(err) == codeBadEncoding {
		return invariant("%s: text is not valid UTF-8 or holds a NUL byte: %v", op, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// timeLayout is RFC 3339 with a fixed nine-digit fraction, the text of the
// utc_time domain: it sorts in time order and keeps every nanosecond
// (timestamptz keeps microseconds; time.RFC3339Nano trims zeros).
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// optionalTime stores a zero time as NULL ("not yet").
func optionalTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func parseOptionalTime(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	return parseTime(*s)
}

// nullJSON stores an absent JSON value (nil or empty) as NULL.
func nullJSON(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

// readJSON reads a nullable JSON column back: NULL is nil.
func readJSON(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

// objectJSON stores an absent JSON value as {} so the column is always a
// valid JSON document.
func objectJSON(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}
