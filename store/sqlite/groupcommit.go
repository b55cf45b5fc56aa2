package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
)

// maxGroup bounds the writes that share one transaction, so a steady
// stream of writers still commits (and answers its callers) regularly.
const maxGroup = 64

// groupWriter shares one SQLite transaction among the writes that arrive
// while it is open: group commit for every write of the store, not only
// the inbox's. SQLite has one writer and, with synchronous=full, one fsync
// per commit; the intake's acks, the inbox worker's session starts and
// the running turns' events used to take turns committing one
// transaction (one fsync) each. Now each write runs in a savepoint of the
// open transaction, in its caller's goroutine, and the last writer of a
// group (nobody else waiting, or maxGroup reached) commits for all; every
// caller returns only after that commit, so a write reported done is on
// disk exactly as before.
//
// A write whose fn fails is rolled back to its savepoint and leaves the
// others alone. When the transaction itself breaks (a savepoint statement
// fails: SQLite rolled the whole transaction back, as it does for an
// interrupted statement or a full disk), every write of the group gets the
// error and none is kept.
type groupWriter struct {
	db *sql.DB
	// token, of capacity 1, is held by the one writer using the
	// connection; the fields below it are only touched while holding it.
	token chan struct{}
	// waiting counts writers blocked on token: a holder leaves the
	// transaction open for them only when there are some, and each of
	// them is sure to take the token (the wait cannot be cancelled), so
	// the last one always commits.
	waiting atomic.Int32
	// commits counts the transactions committed (for tests and
	// benchmarks: writes per commit is the point of it all).
	commits atomic.Int64

	tx      *sql.Tx
	group   *txGroup
	members int
}

// txGroup is the outcome of one shared transaction, for the writers that
// joined it.
type txGroup struct {
	done chan struct{}
	err  error
}

func newGroupWriter(db *sql.DB) *groupWriter {
	return &groupWriter{db: db, token: make(chan struct{}, 1)}
}

// run runs fn in the group's open transaction (or a new one) and returns
// once the transaction holding its writes committed, or fn's error (its
// writes undone). ctx is fn's: a ctx done before fn runs skips it.
func (w *groupWriter) run(ctx context.Context, fn func(tx *sql.Tx) error) error {
	w.waiting.Add(1)
	w.token <- struct{}{}
	w.waiting.Add(-1)

	if w.tx == nil {
		// The transaction outlives this caller's ctx: it carries others'
		// writes too.
		tx, err := w.db.BeginTx(context.Background(), nil)
		if err != nil {
			<-w.token
			return err
		}
		w.tx, w.group, w.members = tx, &txGroup{done: make(chan struct{})}, 0
	}
	g := w.group
	ferr, panicked, broken := w.member(ctx, fn)
	if broken != nil {
		_ = w.tx.Rollback() // already rolled back by SQLite, or undone here
		g.err = fmt.Errorf("shared write transaction: %w", broken)
		w.end()
		rethrow(panicked)
		if ferr != nil {
			return ferr
		}
		return g.err
	}
	joined := ferr == nil && panicked == nil
	if joined {
		w.members++
	}
	if w.waiting.Load() > 0 && w.members < maxGroup {
		// The next writer joins this transaction; the last one commits.
		<-w.token
		rethrow(panicked)
		if !joined {
			return ferr
		}
		<-g.done
		return g.err
	}
	g.err = w.tx.Commit()
	w.commits.Add(1)
	w.end()
	rethrow(panicked)
	if !joined {
		return ferr
	}
	return g.err
}

// end closes the group, answering its waiting writers, and hands the
// connection on.
func (w *groupWriter) end() {
	close(w.group.done)
	w.tx, w.group, w.members = nil, nil, 0
	<-w.token
}

// member runs fn inside a savepoint of the open transaction. ferr is fn's
// error (its writes undone), panicked what fn panicked with (also
// undone), broken an error that ended the whole transaction.
func (w *groupWriter) member(ctx context.Context, fn func(tx *sql.Tx) error) (ferr error, panicked any, broken error) {
	if err := ctx.Err(); err != nil {
		return err, nil, nil
	}
	bg := context.Background() // the savepoint statements belong to the group
	if _, err := w.tx.ExecContext(bg, `SAVEPOINT member`); err != nil {
		return nil, nil, err
	}
	panicked, ferr = guarded(fn, w.tx)
	if ferr != nil || panicked != nil {
		if _, err := w.tx.ExecContext(bg, `ROLLBACK TO member`); err != nil {
			return ferr, panicked, err
		}
	}
	if _, err := w.tx.ExecContext(bg, `RELEASE member`); err != nil {
		return ferr, panicked, err
	}
	return ferr, panicked, nil
}

// guarded calls fn, turning a panic into a value, so the shared
// transaction is rolled back to the savepoint before the panic goes on in
// its caller's goroutine.
func guarded(fn func(tx *sql.Tx) error, tx *sql.Tx) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return nil, fn(tx)
}

func rethrow(p any) {
	if p != nil {
		panic(p)
	}
}
