package engine

import (
	"context"
	"time"
)

// The engine's roles: what *Engine offers to the packages around it,
// declared once, in small parts. A consumer (a bridge, the API, the
// console, the scheduler, a channel's renderer) declares its own
// interface by embedding the roles it calls, so a method's signature is
// written here and nowhere else; enginetest has one fake per role.

// SessionReader reads one session.
type SessionReader interface {
	Session(ctx context.Context, id string) (Session, error)
}

// Sessions reads sessions: one, or a filtered list.
type Sessions interface {
	SessionReader
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
}

// Log reads a session's event log: up to limit events after seq after.
type Log interface {
	Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error)
}

// Starter starts conversations: creates a session (with its first
// message, or storing nothing), or sends input to one.
type Starter interface {
	CreateSession(ctx context.Context, n NewSession) (s Session, created bool, err error)
	CreateSessionWithInput(ctx context.Context, n NewSession, in Input) (s Session, ev Event, created bool, err error)
	Send(ctx context.Context, sessionID string, in Input) (ev Event, duplicate bool, err error)
}

// Turns moves a session's turns on: resume one that stopped, or cancel
// the one running.
type Turns interface {
	Resume(ctx context.Context, sessionID string) (Session, error)
	ResumeWith(ctx context.Context, sessionID string, opts ResumeOptions) (Resumed, error)
	Cancel(ctx context.Context, sessionID string) (Session, error)
}

// ApprovalReader reads one approval.
type ApprovalReader interface {
	Approval(ctx context.Context, id string) (Approval, error)
}

// Approvals reads approvals and decides them.
type Approvals interface {
	ApprovalReader
	Approvals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	Decide(ctx context.Context, approvalID string, d Decision) (Approval, error)
	Retry(ctx context.Context, approvalID string, d Decision) (Approval, error)
}

// Changes tells a reader that a session moved on, without polling.
type Changes interface {
	// Changed is closed at the session's next commit.
	Changed(sessionID string) <-chan struct{}
}

// Deltas streams what the model writes while a turn runs.
type Deltas interface {
	// WatchDeltas feeds the text the model writes in the session's turns
	// from now on (never stored); the caller closes it.
	WatchDeltas(sessionID string) *DeltaFeed
}

// Replica is this engine among the replicas sharing its store.
type Replica interface {
	// LeaseDelivery claims the delivery of the session to origin's
	// platform among the replicas sharing the store, renewed until
	// release; held is false while another holds it.
	LeaseDelivery(ctx context.Context, origin Origin, sessionID string) (release func(), held bool, err error)
	// SharesStore reports whether replicas share the store, and
	// HoldsSession whether this one runs the session's turn (holds its
	// lease).
	SharesStore() bool
	HoldsSession(id string) bool
	// ReplicaID and LeaseTTL name this replica and how long its claims
	// last.
	ReplicaID() string
	LeaseTTL() time.Duration
}

// *Engine plays every role.
var (
	_ Sessions  = (*Engine)(nil)
	_ Log       = (*Engine)(nil)
	_ Starter   = (*Engine)(nil)
	_ Turns     = (*Engine)(nil)
	_ Approvals = (*Engine)(nil)
	_ Changes   = (*Engine)(nil)
	_ Deltas    = (*Engine)(nil)
	_ Replica   = (*Engine)(nil)
)
