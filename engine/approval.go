package engine

import (
	"context"
	"encoding/json"
	"time"

	"brain/tools"
)

// ApprovalStatus is where a proposed write stands.
type ApprovalStatus string

const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalDenied   ApprovalStatus = "denied"
	ApprovalExpired  ApprovalStatus = "expired"
	// ApprovalApplying is written before apply starts, so a crash during the
	// apply is found at start-up and marked unconfirmed, never re-run.
	ApprovalApplying    ApprovalStatus = "applying"
	ApprovalApplied     ApprovalStatus = "applied"
	ApprovalFailed      ApprovalStatus = "failed"
	ApprovalUnconfirmed ApprovalStatus = "unconfirmed"
)

// Approval is one proposed write waiting for, or carrying, a person's
// decision. Input is exactly what apply runs with.
type Approval struct {
	ID        string          `json:"id"`
	SessionID string          `json:"session_id"`
	TurnID    string          `json:"turn_id"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Agent     string          `json:"agent"`
	Input     json.RawMessage `json:"input"`
	Card      tools.Card      `json:"card"`
	// RequestedBy is the person the session talks to.
	RequestedBy string         `json:"requested_by,omitempty"`
	Status      ApprovalStatus `json:"status"`
	// DecisionID is the idempotency key of every apply attempt.
	DecisionID string    `json:"decision_id,omitempty"`
	DecidedBy  string    `json:"decided_by,omitempty"`
	DecidedAt  time.Time `json:"decided_at,omitzero"`
	// Output is apply's result; Error its failure.
	Output    json.RawMessage `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	Attempts  int             `json:"attempts"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt time.Time       `json:"expires_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// ApprovalFilter narrows Store.Approvals; zero values mean "any".
type ApprovalFilter struct {
	Statuses  []ApprovalStatus
	SessionID string
	// ExpiresBefore keeps approvals whose ExpiresAt is before it.
	ExpiresBefore time.Time
	Limit         int
}

// ApprovalCommit changes one approval and appends events to its session in
// one transaction.
type ApprovalCommit struct {
	ID  string
	Now time.Time
	// Update runs inside the transaction on the current row and may change
	// Status, DecisionID, DecidedBy, DecidedAt, Output, Error and Attempts.
	// An error aborts the commit and is returned as is.
	Update func(a *Approval) error
	// Events are appended to the approval's session.
	Events []Event
}

// ApprovalStore is the part of Store that keeps approvals.
type ApprovalStore interface {
	// Approval returns one approval (ErrNotFound when missing).
	Approval(ctx context.Context, id string) (Approval, error)
	// Approvals lists approvals, newest first.
	Approvals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	// CommitApproval applies c atomically and returns the updated approval
	// and the events with their seqs.
	CommitApproval(ctx context.Context, c ApprovalCommit) (Approval, []Event, error)
}
