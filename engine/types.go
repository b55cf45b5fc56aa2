// Package engine is brain's core: sessions, turns, the append-only event log,
// the status machine and the tool loop. It declares the interfaces it needs
// (Store, Model) and the roles it plays for others (roles.go), and imports
// nothing of the project but tools and its own leaves (engine/lease,
// engine/policy): no store, channel, webhook or bot package, and no tool
// family.
package engine

import (
	"encoding/json"
	"time"
)

// Status is where a session stands.
type Status string

const (
	StatusIdle          Status = "idle"
	StatusRunning       Status = "running"
	StatusAwaitingInput Status = "awaiting_input"
	StatusInterrupted   Status = "interrupted"
	StatusFailed        Status = "failed"
)

// Origin says where a session came from: the platform that owns its
// thread, or the API, the console or a schedule.
type Origin string

// Origins brain has today; a platform names its own.
const (
	OriginAPI      Origin = "api"
	OriginConsole  Origin = "console"
	OriginSlack    Origin = "slack"
	OriginLinear   Origin = "linear"
	OriginSchedule Origin = "schedule"
)

// Event types; each has its payload type (see Payload).
const (
	EventUserMessage         = "user.message"
	EventAgentMessage        = "agent.message"
	EventToolCall            = "tool.call"
	EventToolProgress        = "tool.progress"
	EventToolResult          = "tool.result"
	EventQuestionAsked       = "question.asked"
	EventApprovalRequested   = "approval.requested"
	EventApprovalDecided     = "approval.decided"
	EventApprovalApplied     = "approval.applied"
	EventApprovalFailed      = "approval.failed"
	EventApprovalUnconfirmed = "approval.unconfirmed"
	EventApprovalExpired     = "approval.expired"
	EventApprovalRetried     = "approval.retried"
	EventApprovalVoted       = "approval.voted"
	EventApprovalReminder    = "approval.reminder"
	EventResultCommitted     = "result.committed"
	EventSessionError        = "session.error"
	EventSessionContext      = "session.context"
	EventSessionStatus       = "session.status"
	EventTurnStarted         = "turn.started"
	EventTurnCompleted       = "turn.completed"
)

// Outcome is how a turn ended, recorded on turn.completed.
type Outcome string

// Turn outcomes.
const (
	OutcomeCompleted     Outcome = "completed"
	OutcomeQuestion      Outcome = "question"
	OutcomeMaxIterations Outcome = "max_iterations"
	OutcomeCancelled     Outcome = "cancelled"
	OutcomeFailed        Outcome = "failed"
)

// Session is one conversation with an agent.
type Session struct {
	ID          string `json:"id"`
	Agent       string `json:"agent"`
	Origin      Origin `json:"origin"`
	ThreadKey   string `json:"thread_key,omitempty"`
	Interactive bool   `json:"interactive"`
	StartedBy   string `json:"started_by,omitempty"`
	// StartedKey is the name of the API key that started the session, when
	// one did (StartedBy may name someone else for a key with act_for):
	// forbid_self keeps that key from approving the session's requests.
	StartedKey string    `json:"started_key,omitempty"`
	Status     Status    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// LastSeq is the sequence number of the newest event.
	LastSeq int64 `json:"last_seq"`
	// InputCursor is the seq of the newest user.message taken into a turn;
	// user.message events after it are queued input.
	InputCursor int64 `json:"input_cursor"`
	// Checkpoint is the seq of the last turn.completed event.
	Checkpoint int64 `json:"checkpoint"`
	// Question is the open question, if any (JSON object).
	Question json.RawMessage `json:"question,omitempty"`
	// Result is the latest committed result (JSON object).
	Result json.RawMessage `json:"result,omitempty"`
	// ContextSeq is the context checkpoint: the model's context is rebuilt
	// from the events after it alone (the latest summary, the turns after
	// it and the inputs they took), so a turn never reads the whole log.
	// The engine moves it when it records a summary; 0 = the whole log.
	ContextSeq int64 `json:"-"`
	// UsageTotal is the running total of the tokens the session's model
	// calls used, kept by the store as commits record them (see
	// Engine.SessionUsage).
	UsageTotal Usage `json:"-"`
}

// Event is one entry of a session's append-only log.
type Event struct {
	ID        string          `json:"id"`
	SessionID string          `json:"-"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	TurnID    string          `json:"turn_id,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}
