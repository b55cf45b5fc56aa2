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
	// DecidedSurface is where DecidedBy is an identity (engine.Surface*:
	// an API vote on a Slack session is an "api" identity), so the apply
	// acts as the person who decided, whichever surface they used.
	DecidedSurface string `json:"decided_surface,omitempty"`
	// Output is apply's result; Error its failure.
	Output    json.RawMessage `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	Attempts  int             `json:"attempts"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt time.Time       `json:"expires_at"`
	UpdatedAt time.Time       `json:"updated_at"`

	// Policy names the approvals.policies entry that applied, if any.
	Policy string `json:"policy,omitempty"`
	// Required is how many distinct people must approve; 0 means 1.
	Required int `json:"required,omitempty"`
	// ForbidSelf keeps the requester from approving their own request.
	ForbidSelf bool `json:"forbid_self,omitempty"`
	// Votes are the approvals recorded so far, in order; the apply starts
	// when there are Required of them.
	Votes []Vote `json:"votes,omitempty"`
	// Comment is the deciding person's comment (approve) or reason (deny).
	Comment string `json:"comment,omitempty"`
	// RemindedAt is when the reminder before expiry was recorded.
	RemindedAt time.Time `json:"reminded_at,omitzero"`
	// MessageID is the id of the model message that proposed it (the
	// apply's tools.Call.MessageID), recorded with the proposal.
	MessageID string `json:"-"`
}

// Vote is one person's approval of an approval that needs several.
type Vote struct {
	By string `json:"by"`
	// Key is the API key the vote came through, when the voter
	// authenticated with one (empty for Slack, Linear and console
	// people): one key is one voter, whoever it names.
	Key string `json:"key,omitempty"`
	// Person is the person the voter's identity is linked to, if any:
	// one person is one voter, whichever surface they vote from.
	Person  string    `json:"person,omitempty"`
	At      time.Time `json:"at"`
	Comment string    `json:"comment,omitempty"`
}

// Needed is how many distinct approvals a needs (at least 1).
func (a Approval) Needed() int { return max(a.Required, 1) }

// VotedBy reports whether by has already approved a.
func (a Approval) VotedBy(by string) bool {
	return a.votedAs(by, "")
}

// votedAs reports whether a vote came from by, or through key.
func (a Approval) votedAs(by, key string) bool {
	for _, v := range a.Votes {
		if v.By == by || key != "" && v.Key == key {
			return true
		}
	}
	return false
}

// votedAsPerson returns the vote of person (linked identities), if any.
func (a Approval) votedAsPerson(person string) (Vote, bool) {
	for _, v := range a.Votes {
		if person != "" && v.Person == person {
			return v, true
		}
	}
	return Vote{}, false
}

// ApprovalFilter narrows Store.Approvals; zero values mean "any".
type ApprovalFilter struct {
	Statuses  []ApprovalStatus
	SessionID string
	// ExpiresBefore keeps approvals whose ExpiresAt is before it.
	ExpiresBefore time.Time
	// Decider, when set, keeps the approvals one person may decide, so
	// the database finds them instead of a scan of the newest pending.
	Decider *ApprovalDecider
	Limit   int
}

// ApprovalCommit changes one approval and appends events to its session in
// one transaction.
type ApprovalCommit struct {
	ID  string
	Now time.Time
	// Update runs inside the transaction on the current row and may change
	// Status, DecisionID, DecidedBy, DecidedAt, Output, Error, Attempts,
	// Votes, Comment and RemindedAt. An error aborts the commit and is
	// returned as is.
	Update func(a *Approval) error
	// Events are appended to the approval's session.
	Events []Event
	// Emit, when set, runs inside the transaction after Update with the
	// updated row; its events are appended after Events. It lets what is
	// recorded depend on what Update found (one more vote, or the last).
	Emit func(a Approval) ([]Event, error)
	// Fence, when set, makes the commit conditional on the lease it names,
	// as Commit.Fence does.
	Fence *Fence
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
