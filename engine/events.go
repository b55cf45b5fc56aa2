package engine

import (
	"encoding/json"
	"strings"
	"time"

	"brain/tools"
)

// Payload is the typed data of one event: one type per event type. The set
// is closed (isPayload is unexported); NewEvent and Event.Decode (in
// eventcodec.go) are the only code that turns payloads into the JSON the
// log holds and back.
//
// Field order matters: the JSON must stay byte-for-byte what earlier
// versions wrote, and several payloads were written from Go maps, whose keys
// encoding/json sorts. Those payloads declare their fields in key order.
type Payload interface {
	// EventType is the event type this payload is the data of.
	EventType() string
	isPayload()
}

// The payloads that are also engine values: user.message is the Input as
// sent, tool.call the model's ToolCall, question.asked the Question and
// result.committed the ResultRecord.
func (Input) EventType() string        { return EventUserMessage }
func (ToolCall) EventType() string     { return EventToolCall }
func (Question) EventType() string     { return EventQuestionAsked }
func (ResultRecord) EventType() string { return EventResultCommitted }

// AgentMessage is agent.message: the model's text.
type AgentMessage struct {
	Text string `json:"text"`
}

// ToolProgress is tool.progress: what a running tool reported.
type ToolProgress struct {
	CallID string          `json:"call_id"`
	Data   json.RawMessage `json:"data"`
	Name   string          `json:"name"`
}

// ToolCallResult is tool.result: what the model was told a call produced.
// CallID is brain's id of the call and ProviderCallID the provider's (see
// ToolCall); results written before brain minted its own ids have only
// CallID, the provider's.
type ToolCallResult struct {
	CallID         string         `json:"call_id"`
	Name           string         `json:"name"`
	Result         ToolResultBody `json:"result"`
	ProviderCallID string         `json:"provider_call_id,omitempty"`
}

// ModelCallID is the id the model knows the call by.
func (p ToolCallResult) ModelCallID() string {
	if p.ProviderCallID != "" {
		return p.ProviderCallID
	}
	return p.CallID
}

// ToolResultBody is a tool result as MCP shapes it: content parts and the
// error flags.
type ToolResultBody struct {
	Content []TextPart `json:"content"`
	IsError bool       `json:"is_error"`
	// UnknownOutcome marks a failure after dispatch: a side effect may
	// have happened.
	UnknownOutcome bool `json:"unknown_outcome"`
}

// TextPart is one content part of a tool result; Type is "text".
type TextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// textResult is the body of a result with one text part.
func textResult(text string, isError, unknown bool) ToolResultBody {
	return ToolResultBody{Content: []TextPart{{Type: "text", Text: text}}, IsError: isError, UnknownOutcome: unknown}
}

// Text joins the text of the content parts, one per line.
func (b ToolResultBody) Text() string {
	parts := make([]string, 0, len(b.Content))
	for _, c := range b.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// ApprovalRequested is approval.requested: a proposed write and its card.
type ApprovalRequested struct {
	ApprovalID  string          `json:"approval_id"`
	CallID      string          `json:"call_id"`
	ExpiresAt   time.Time       `json:"expires_at"`
	Facts       []tools.Fact    `json:"facts"`
	Input       json.RawMessage `json:"input"`
	RequestedBy string          `json:"requested_by"`
	Title       string          `json:"title"`
	Tool        string          `json:"tool"`
}

// Decisions recorded on approval.decided.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
)

// ApprovalDecided is approval.decided: the first decision on an approval.
type ApprovalDecided struct {
	ApprovalID string `json:"approval_id"`
	By         string `json:"by"`
	// Key is the API key the decision came through, if any.
	Key string `json:"key,omitempty"`
	// Decision is DecisionApprove or DecisionDeny.
	Decision   string `json:"decision"`
	DecisionID string `json:"decision_id"`
	Title      string `json:"title"`
	Tool       string `json:"tool"`
	// Comment is the decider's comment (approve) or reason (deny).
	Comment string `json:"comment,omitempty"`
	// Policy names the approvals policy that applied, if any; an
	// auto-approval is By "policy:NAME" (ByPolicy tells).
	Policy string `json:"policy,omitempty"`
	// Approvals lists every approval of an N-person rule, in order.
	Approvals []Vote `json:"approvals,omitempty"`
}

// Denied reports whether the decision was a denial.
func (p ApprovalDecided) Denied() bool { return p.Decision == DecisionDeny }

// ApplySucceeded is approval.applied: apply reported success. Output is
// its result when it returned JSON.
type ApplySucceeded struct {
	ApprovalID string          `json:"approval_id"`
	DecisionID string          `json:"decision_id"`
	Output     json.RawMessage `json:"output,omitempty"`
	Status     ApprovalStatus  `json:"status"` // ApprovalApplied
	Tool       string          `json:"tool"`
}

// ApplyFailed is approval.failed: apply reported an error, so nothing
// was changed.
type ApplyFailed struct {
	ApprovalID string         `json:"approval_id"`
	DecisionID string         `json:"decision_id"`
	Error      string         `json:"error"`
	Status     ApprovalStatus `json:"status"` // ApprovalFailed
	Tool       string         `json:"tool"`
}

// ApplyUnconfirmed is approval.unconfirmed: apply never reported back
// (timeout, crash), so the write may or may not have happened. Status is
// ApprovalUnconfirmed.
type ApplyUnconfirmed ApplyFailed

// ApprovalExpiry is approval.expired: nobody decided in time.
type ApprovalExpiry struct {
	ApprovalID string `json:"approval_id"`
}

// ApprovalRetried is approval.retried: a person re-ran a failed or
// unconfirmed apply, with the same decision id.
type ApprovalRetried struct {
	ApprovalID string `json:"approval_id"`
	Attempt    int    `json:"attempt"`
	By         string `json:"by"`
	DecisionID string `json:"decision_id"`
}

// ApprovalUpdate is a payload that changes an approval after its request:
// decided, applied, failed, unconfirmed, expired or retried. Channels use
// it to refresh the approval's card in one place.
type ApprovalUpdate interface {
	Payload
	// UpdatedApproval is the id of the approval.
	UpdatedApproval() string
}

func (p ApprovalDecided) UpdatedApproval() string  { return p.ApprovalID }
func (p ApplySucceeded) UpdatedApproval() string   { return p.ApprovalID }
func (p ApplyFailed) UpdatedApproval() string      { return p.ApprovalID }
func (p ApplyUnconfirmed) UpdatedApproval() string { return p.ApprovalID }
func (p ApprovalExpiry) UpdatedApproval() string   { return p.ApprovalID }
func (p ApprovalRetried) UpdatedApproval() string  { return p.ApprovalID }
func (p ApprovalVoted) UpdatedApproval() string    { return p.ApprovalID }

// Codes of session.error events (and of failed turns) besides CodeInternal
// and the provider codes (ProviderAuth ...).
const (
	// CodeInterrupted: brain stopped or shut down while the turn ran.
	CodeInterrupted = "interrupted"
	// CodeInputCancelled: input that was not answered because the session
	// stopped (it follows the error that stopped it, so channels need not
	// show it again; resume with retry runs it), or queued input a cancel
	// dropped. Its message says which, and how to run it.
	CodeInputCancelled = "input_cancelled"
	// CodeElicitationUnanswered: a tool call held open for the person's
	// input got no answer in time and was stopped (outcome unknown).
	CodeElicitationUnanswered = "elicitation_unanswered"
)

// Messages of session.error events.
const (
	// resumeHint ends the errors of a stopped turn.
	resumeHint = "resume to continue, or resume with retry to run this message again"
	// notRunStopped is the input_cancelled error of input a stop left
	// unanswered besides the one the stop's own error names.
	notRunStopped = "not run: the session stopped before this message was answered; resume with retry to run it again, or send it again"
	// notRunCancelled is the input_cancelled error of queued input a
	// cancel dropped.
	notRunCancelled = "not run: the session was cancelled before this message ran; send it again to run it"
)

// SessionError is session.error: why the input InputID did not get an
// answer.
type SessionError struct {
	Code    string `json:"code"`
	InputID string `json:"input_id"`
	// Input is the start of that input's text, so a channel can say which
	// message was not answered (absent in events of older versions).
	Input   string `json:"input,omitempty"`
	Message string `json:"message"`
}

// SessionContext is session.context: text the model sees before the first
// input (NewSession.Context).
type SessionContext struct {
	Text string `json:"text"`
}

// Reasons of session.status events. A turn that ends normally gives
// "turn " + its outcome (ReasonTurnCancelled is one); one that stops broken
// gives its error code.
const (
	ReasonTurnStarted   = "turn started"
	ReasonTurnCancelled = "turn " + string(OutcomeCancelled)
	ReasonResumed       = "resumed"
	// ReasonCancelled: Cancel with no turn running (it drops queued input
	// and closes the open question).
	ReasonCancelled = "cancelled"
)

// turnEndReason is the reason of the status that ends a turn with outcome.
func turnEndReason(outcome Outcome) string { return "turn " + string(outcome) }

// SessionStatus is session.status: every change of a session's status.
type SessionStatus struct {
	Reason string `json:"reason"`
	Status Status `json:"status"`
}

// Cancelled reports whether the change was a cancel, of a running turn (by
// Cancel or by interrupting input) or of an idle session; either closes
// the open question.
func (p SessionStatus) Cancelled() bool {
	return p.Reason == ReasonCancelled || p.Reason == ReasonTurnCancelled
}

// TurnStarted is turn.started: the user.message events the turn took, in
// order.
type TurnStarted struct {
	InputIDs []string `json:"input_ids"`
}

// TurnCompleted is turn.completed. A turn that ended normally (any outcome
// but OutcomeFailed) records its rounds and usage; a failed one records
// only the Code that stopped it. MarshalJSON writes those two shapes.
type TurnCompleted struct {
	Code    string  `json:"code"`
	Outcome Outcome `json:"outcome"`
	Rounds  int     `json:"rounds"`
	Usage   Usage   `json:"usage"`
}

func (AgentMessage) EventType() string      { return EventAgentMessage }
func (ToolProgress) EventType() string      { return EventToolProgress }
func (ToolCallResult) EventType() string    { return EventToolResult }
func (ApprovalRequested) EventType() string { return EventApprovalRequested }
func (ApprovalDecided) EventType() string   { return EventApprovalDecided }
func (ApplySucceeded) EventType() string    { return EventApprovalApplied }
func (ApplyFailed) EventType() string       { return EventApprovalFailed }
func (ApplyUnconfirmed) EventType() string  { return EventApprovalUnconfirmed }
func (ApprovalExpiry) EventType() string    { return EventApprovalExpired }
func (ApprovalRetried) EventType() string   { return EventApprovalRetried }
func (SessionError) EventType() string      { return EventSessionError }
func (SessionContext) EventType() string    { return EventSessionContext }
func (SessionStatus) EventType() string     { return EventSessionStatus }
func (TurnStarted) EventType() string       { return EventTurnStarted }
func (TurnCompleted) EventType() string     { return EventTurnCompleted }

func (Input) isPayload()             {}
func (ToolCall) isPayload()          {}
func (Question) isPayload()          {}
func (ResultRecord) isPayload()      {}
func (AgentMessage) isPayload()      {}
func (ToolProgress) isPayload()      {}
func (ToolCallResult) isPayload()    {}
func (ApprovalRequested) isPayload() {}
func (ApprovalDecided) isPayload()   {}
func (ApplySucceeded) isPayload()    {}
func (ApplyFailed) isPayload()       {}
func (ApplyUnconfirmed) isPayload()  {}
func (ApprovalExpiry) isPayload()    {}
func (ApprovalRetried) isPayload()   {}
func (SessionError) isPayload()      {}
func (SessionContext) isPayload()    {}
func (SessionStatus) isPayload()     {}
func (TurnStarted) isPayload()       {}
func (TurnCompleted) isPayload()     {}

// EventContextCompacted is context.compacted: the model's context was
// made smaller. The log keeps every event; the payload says how the
// context is rebuilt from it from now on (see buildMessages).
const EventContextCompacted = "context.compacted"

// Reasons of context.compacted.
const (
	CompactBudget   = "budget"    // the next request would not fit
	CompactProvider = "provider"  // the provider refused a request as too long
	CompactAPI      = "requested" // POST /v1/sessions/{id}/compact
)

// ContextCompacted is context.compacted. Shortened lists the tool.result
// events whose content the model now sees cut to its head. When Summary
// is set, it replaces events FromSeq..ToSeq (the start of the log up to a
// round boundary; an earlier summary is part of what it summarises),
// followed by Kept: what brain itself carried over from that part so that
// no summary can drop it (the question being answered, the latest result,
// approval outcomes). Usage is the summary call's.
type ContextCompacted struct {
	Reason       string   `json:"reason"`
	Summary      string   `json:"summary,omitempty"`
	FromSeq      int64    `json:"from_seq,omitempty"`
	ToSeq        int64    `json:"to_seq,omitempty"`
	Kept         []string `json:"kept,omitempty"`
	Shortened    []int64  `json:"shortened,omitempty"`
	TokensBefore int      `json:"tokens_before"`
	TokensAfter  int      `json:"tokens_after"`
	Usage        Usage    `json:"usage"`
}

func (ContextCompacted) EventType() string { return EventContextCompacted }
func (ContextCompacted) isPayload()        {}
