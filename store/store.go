// Package store is brain's store contract: what a database driver
// implements and what the rest of brain may ask of one. engine.Store (the
// sessions, their event log, results and approvals) is declared by the
// engine, which calls it; this package adds the records brain keeps beside
// the log — platform inbox items, schedule runs, channel delivery state,
// Linear grants — with the small interfaces for storing them (Threads,
// Inbox, Runs, ChannelState, LinearTokens, Health, Audit), Store (everything a
// driver has), the capabilities only some drivers have (Replicated), the
// merge rules of a commit (ApplyCommit, ApplyApproval), the checks every
// driver makes before any I/O (CheckCommit, ...) and the migration loader.
// store/storetest is the conformance suite every driver runs; store/sqlite
// and store/postgres are the drivers.
//
// It imports the standard library and engine, nothing else of the project.
// The bridges, the scheduler and the console depend on these interfaces,
// never on a driver. Drivers translate their own errors as engine does: a
// missing record is engine.ErrNotFound, a record that breaks the contract
// engine.ErrInvariant. Every method is safe for concurrent use, including
// by several processes sharing one database.
package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"brain/engine"
)

// Store is everything a brain driver implements: the engine's store, the
// records the bridges, the scheduler, readiness and metrics keep, and
// leases (a driver that one process owns alone still keeps them, though
// the engine then keeps its own in memory). store/storetest checks each
// method's promise.
type Store interface {
	engine.Store
	Threads
	Inbox
	Runs
	ChannelState
	CodeChannels
	LinearTokens
	People
	Connections
	Secrets
	Memory
	Health
	SessionSearch
	UsageReport
	Audit
	Spending
	RateLimits
	Retention
	engine.Leases
	Close() error
}

// Replicated is the capability of a store several brain processes share
// at once (store/postgres): its leases are what the replicas claim a
// session with (engine.Leases), and it carries their messages to each
// other — a request to stop a turn running elsewhere (engine.Peers) and
// the sessions the others commit to (Changes). A store without it belongs
// to one process, which guards it with a file lock and keeps its leases in
// memory. Assert it on a Store; never on a driver's type.
type Replicated interface {
	Store
	engine.Peers
	// Changes reports the sessions any process commits events to, and the
	// requests to stop a turn, to feed until ctx ends; poll is how often
	// it looks when it cannot be told (a session may be reported more than
	// once: feed's functions must be cheap and idempotent).
	Changes(ctx context.Context, poll time.Duration, log *slog.Logger, feed Feed)
}

// Feed is what Replicated.Changes reports to.
type Feed struct {
	// Changed is called with the id of each session a commit wrote to.
	Changed func(sessionID string)
	// StopTurn, when set, is called when a process asks, by
	// engine.Peers.StopTurn, for a session's turn to stop wherever it runs.
	StopTurn func(sessionID string, interrupt bool)
}

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
