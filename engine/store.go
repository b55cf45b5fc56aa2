package engine

import (
	"context"
	"encoding/json"
	"time"
)

// Store persists sessions and their event logs: what the engine reads and
// writes, nothing more (the rest of the store contract — records kept
// beside the log, such as the durable inbox, the checks and merge rules
// every driver applies — is package store). Implementations translate
// their own errors: a missing session is ErrNotFound. All methods are safe
// for concurrent use. store/storetest is the suite every implementation
// runs.
type Store interface {
	// CreateSession inserts s. If idempotencyKey was used before, or s has a
	// ThreadKey that already maps to a session, it returns that session and
	// created=false without writing anything.
	CreateSession(ctx context.Context, s Session, idempotencyKey string) (Session, bool, error)
	// Session returns one session.
	Session(ctx context.Context, id string) (Session, error)
	// SessionByKey returns the session CreateSession created with
	// idempotencyKey; ErrNotFound when the key was never used. It writes
	// nothing, so a repeat can be recognised before anything is created.
	SessionByKey(ctx context.Context, idempotencyKey string) (Session, error)
	// Sessions lists sessions, newest first.
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
	// Commit appends events and updates the session in one transaction.
	Commit(ctx context.Context, c Commit) (CommitResult, error)
	// Events returns up to limit events with seq > after, ordered by seq;
	// limit <= 0 means all.
	Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error)
	// Results returns every committed result of a session, oldest first.
	Results(ctx context.Context, sessionID string) ([]ResultRecord, error)
	ApprovalStore
}

// SessionFilter narrows Sessions. Zero values mean "any".
type SessionFilter struct {
	Statuses []Status
	// PendingInput keeps sessions with user.message events not yet taken
	// into a turn.
	PendingInput bool
	Limit        int
}

// Commit is one atomic change to a session: events appended in order, and
// the session row updated.
type Commit struct {
	SessionID string
	// Now stamps the events (when CreatedAt is zero) and the session's
	// UpdatedAt.
	Now time.Time
	// Update runs inside the transaction on the current session row and may
	// change Status, InputCursor, Checkpoint, Question and Result. An error
	// aborts the commit and is returned as is.
	Update func(s *Session) error
	// Events get their Seq assigned by the store, in order.
	Events []Event
	// InputKey makes the commit idempotent per session: when the key was
	// recorded by an earlier commit, nothing is written, Update is not
	// called, and the result holds that commit's first event with Duplicate
	// set.
	InputKey string
	// Result, when set, is appended to the session's result history (the
	// caller sets Session.Result in Update).
	Result *ResultRecord
	// NewApproval, when set, is inserted (its SessionID is c.SessionID).
	NewApproval *Approval
	// Fence, when set, makes the commit conditional on the lease it names
	// (see Fence): refused with ErrFenced, nothing written, when another
	// owner holds it or nobody does.
	Fence *Fence
}

// CommitResult is what a Commit wrote.
type CommitResult struct {
	Session   Session
	Events    []Event
	Duplicate bool
}

// ResultRecord is one committed value of the session's result tool, and
// the payload of result.committed. Its fields are in the order of their
// JSON keys, as earlier versions wrote them (see Payload).
type ResultRecord struct {
	CallID     string          `json:"call_id"`
	Data       json.RawMessage `json:"data"`
	ReportedAt time.Time       `json:"reported_at"`
	TurnID     string          `json:"turn_id"`
}
