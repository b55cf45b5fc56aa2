// Package durable holds the records brain keeps beside the event log —
// platform inbox items, schedule runs, channel delivery state — and the
// small interfaces for storing them. Stores (store/sqlite, and any other)
// implement these interfaces; the bridges and the scheduler depend on them,
// never on a concrete store.
//
// It is a leaf: it imports the standard library and engine, nothing else of
// the project. Implementations translate their own errors as engine does: a
// missing record is engine.ErrNotFound, a record that breaks the contract
// engine.ErrInvariant.
// Every method is safe for concurrent use, including by several processes
// sharing one database.
package durable

import (
	"context"
	"fmt"

	"brain/engine"
)

// Threads finds the session a platform thread is bound to. The binding is
// made by engine.Store.CreateSession (one session per thread key); bridges
// read it to route a message to its session.
type Threads interface {
	// SessionByThread returns the session bound to threadKey, or an error
	// matching engine.ErrNotFound (also for an empty key).
	SessionByThread(ctx context.Context, threadKey string) (engine.Session, error)
}

// invariant is an error matching engine.ErrInvariant, as the stores return
// for a record that breaks the contract.
func invariant(format string, args ...any) error {
	return fmt.Errorf("%w: %s", engine.ErrInvariant, fmt.Sprintf(format, args...))
}
