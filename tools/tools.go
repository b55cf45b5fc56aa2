// Package tools is the tool contract: what a tool is (Definition), what it is
// called with (Call), how it fails (Error), JSON-Schema validation of its
// input and output (Set), the one secret scrubber (Scrubber) that the
// tool families and the logs share, and the one HTTP transport they
// dispatch through (OnceTransport: each request sent at most once). It is a
// leaf: it imports nothing of the project.
// Tool families live in subpackages and import only this package.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// Definition is one tool the model may call. A tool has either Run, or
// Preview and Apply (a tool that waits for a person's approval); never both,
// never one of the pair.
type Definition struct {
	// Name is what the model calls: letters, digits, '_' and '-'.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Input is the JSON Schema of the arguments; empty means any object.
	Input json.RawMessage
	// Output is the JSON Schema of the result; required on the result tool.
	Output json.RawMessage
	// Result marks the agent's result tool (at most one per agent).
	Result bool
	// Timeout bounds one call; zero means the engine's default.
	Timeout time.Duration
	// FoldCase lists the arguments ("$.repo", "$.target.host") whose
	// string values the tool's service compares without regard to case
	// (GitHub owners and repositories, host names). Their canonical form
	// is lower case, and approval policies compare them ignoring case, so
	// a policy on acme/api also catches Acme/API.
	FoldCase []string

	Run     func(ctx context.Context, call Call) (json.RawMessage, error)
	Preview func(ctx context.Context, call Call) (Card, error)
	Apply   func(ctx context.Context, call Call, decision Decision) (json.RawMessage, error)

	// Hold, set beside Run, lets approval policies hold this tool's
	// calls: a call a review policy matches waits for a person's approval
	// (Hold builds its card, as a preview would) and then runs with Run;
	// a deny policy refuses it; any other call runs at once. It suits a
	// tool whose calls are mostly harmless but some may need a person
	// (the memory tool: reads, and writes to some scopes).
	Hold func(ctx context.Context, call Call) (Card, error)
}

// NeedsApproval reports whether the tool proposes a write instead of running.
func (d Definition) NeedsApproval() bool { return d.Preview != nil || d.Apply != nil }

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ReservedNames are tool names the engine provides itself.
var reservedNames = map[string]bool{"ask": true}

// Check reports the first problem with the definition, naming the tool.
func (d Definition) Check() error {
	if !validName.MatchString(d.Name) {
		return fmt.Errorf("tool %q: name must match [A-Za-z0-9_-]+ (at most 128 characters)", d.Name)
	}
	if d.Description == "" {
		return fmt.Errorf("tool %q: description is empty", d.Name)
	}
	for _, p := range d.FoldCase {
		if !foldPath.MatchString(p) {
			return fmt.Errorf("tool %q: fold_case path %q: want $.key or $.key.key", d.Name, p)
		}
	}
	hasRun := d.Run != nil
	hasPair := d.Preview != nil && d.Apply != nil
	switch {
	case hasRun && d.NeedsApproval():
		return fmt.Errorf("tool %q: has run and preview/apply; a tool has one or the other", d.Name)
	case !hasRun && !hasPair && d.NeedsApproval():
		return fmt.Errorf("tool %q: has only one of preview and apply; it needs both", d.Name)
	case !hasRun && !hasPair:
		return fmt.Errorf("tool %q: has neither run nor preview/apply", d.Name)
	case d.Hold != nil && !hasRun:
		return fmt.Errorf("tool %q: hold needs run (it holds run's calls for approval)", d.Name)
	}
	if d.Result {
		if len(d.Output) == 0 {
			return fmt.Errorf("tool %q: a result tool must declare an output schema", d.Name)
		}
		if !hasRun {
			return fmt.Errorf("tool %q: a result tool must use run, not preview/apply", d.Name)
		}
	}
	return nil
}

// Call is what a tool is called with.
type Call struct {
	Input     json.RawMessage
	SessionID string
	// MessageID is the id of the model's message that holds the call: the
	// id of the first event brain recorded for that message (its
	// agent.message, or its first tool.call when it has no text).
	MessageID string
	// ToolCallID is brain's id of this invocation, unique in the session
	// (never the provider's, which a provider may reuse).
	ToolCallID string
	Agent      string
	// Model is the model that asked for the call, as its provider names
	// it; empty in an approved write's apply, which no model runs.
	Model string
	// RequestID is the X-Request-ID of the API request that sent the
	// input the turn answers (the newest such input, when the turn took
	// several); empty for input from elsewhere (Slack, Linear, schedules,
	// the console) and in an apply.
	RequestID string
	// Progress records progress metadata; nil means progress is dropped.
	Progress func(ctx context.Context, data json.RawMessage) error
	// Elicit asks the person for input while the call waits; nil means
	// nobody can be asked (decline).
	Elicit ElicitFunc
	// Resume is set when the call is sent again with the person's answer
	// to the InputRequired the tool returned before.
	Resume *Resume
	// Requester is the author of the newest input the turn answers, on
	// the session's surface (in an apply: the person the session talks
	// to); Surface "schedule" when a schedule started the session.
	Requester Identity
	// Approver is, in an approval's apply, the person whose vote decided
	// it; zero elsewhere and when a policy decided.
	Approver Identity
}

// IdempotencyKey identifies this invocation for downstream writes. It stays
// the same when the invocation is retried; a new call from the model gets a
// new one.
func (c Call) IdempotencyKey() string { return c.SessionID + ":" + c.ToolCallID }

// ReportProgress records JSON-compatible progress metadata for the call.
func (c Call) ReportProgress(ctx context.Context, v any) error {
	if c.Progress == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("report progress: %w", err)
	}
	return c.Progress(ctx, data)
}

// Card is what a person sees before approving a write.
type Card struct {
	Title string `json:"title"`
	Facts []Fact `json:"facts"`
	// Detail is a long text (a whole diff) that the console's approval
	// page shows in full; platform cards show the facts and link there.
	Detail string `json:"detail,omitempty"`
	// Found is what the preview found that the arguments do not say, as
	// short strings: ids that apply must act on exactly (the commits a
	// person saw) and facts approval policies may test at $.found.KEY
	// (the paths a change touches). It is stored with the approval and
	// handed back to apply in Decision.Found.
	Found map[string]string `json:"found,omitempty"`
}

// Fact is one labelled line of a Card.
type Fact struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Decision is a person's approval of a proposed write. ID is stable across
// retries of the apply; pass it downstream as the idempotency key.
type Decision struct {
	ID string
	By string
	// Found is the approved card's Found: what the preview recorded.
	Found map[string]string
}

// Error is a tool failure the model sees as an error result. UnknownOutcome
// is true when the failure came after the request left for the tool's
// service, so a side effect may already have happened.
type Error struct {
	Message        string
	UnknownOutcome bool
	// Cause, when set, says the failure comes from how the tool is set up
	// (a missing or refused credential, an endpoint that cannot work), not
	// from this call: a short text, the same for every call it breaks,
	// without secrets. The engine logs each cause of a tool once, so an
	// operator learns of it without a line per call.
	Cause string
}

func (e *Error) Error() string { return e.Message }

// Misconfigured is a tool error that the tool's configuration causes (see
// Error.Cause), raised before anything was dispatched or refused by the
// service, so nothing happened.
func Misconfigured(cause, format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...), Cause: cause}
}

// Failed is a tool error raised before anything was dispatched.
func Failed(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

// Unknown is a tool error raised after dispatch: the outcome is unknown.
func Unknown(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...), UnknownOutcome: true}
}
