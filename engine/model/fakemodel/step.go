package fakemodel

// Step is one scripted answer of the fake model server (test double). The
// zero Step echoes the last user text, like Echo.
type Step struct {
	kind    stepKind
	text    string
	calls   []Call
	status  int
	message string
	wait    <-chan struct{}
	fn      func(Request) Step
	pace    *pacing // nil: the text arrives in two deltas at once
}

type stepKind int

const (
	kindEcho stepKind = iota
	kindAnswer
	kindFail
	kindFailMidStream
	kindDisconnect
	kindBlock
	kindHold
	kindFunc
	kindContextTooLong
)

// Call is a tool call the fake model makes. An empty ID is generated; an
// empty Input is sent as {}. Input is sent as given, so a test can send
// invalid JSON on purpose.
type Call struct {
	ID    string
	Name  string
	Input string
}

// Text answers with text and no tool calls (stop reason end_turn / stop).
func Text(text string) Step { return Step{kind: kindAnswer, text: text} }

// ToolCalls answers with tool calls (stop reason tool_use / tool_calls).
func ToolCalls(calls ...Call) Step { return Step{kind: kindAnswer, calls: calls} }

// TextAndTools answers with text followed by tool calls.
func TextAndTools(text string, calls ...Call) Step {
	return Step{kind: kindAnswer, text: text, calls: calls}
}

// Echo answers "echo: <last user text>".
func Echo() Step { return Step{kind: kindEcho} }

// Fail answers with the HTTP status and the provider's error JSON. Retryable
// statuses (408, 409, 429, 5xx) carry "retry-after-ms: 0" so the SDKs'
// own retries happen at once instead of after their backoff.
func Fail(status int, message string) Step {
	return Step{kind: kindFail, status: status, message: message}
}

// FailMidStream starts an Anthropic stream (HTTP 200, message_start) and
// then sends an error event of the type matching status, as Anthropic does
// when it becomes overloaded mid-answer. Other requests get Fail.
func FailMidStream(status int, message string) Step {
	return Step{kind: kindFailMidStream, status: status, message: message}
}

// Disconnect drops the connection without an answer.
func Disconnect() Step { return Step{kind: kindDisconnect} }

// Block holds the request until ch is closed, then answers with the next
// step of the script (or the default). A cancelled request or a closed
// server ends the wait without an answer.
func Block(ch <-chan struct{}) Step { return Step{kind: kindBlock, wait: ch} }

// Hold holds the request until Release is called, the request is cancelled
// or the server is closed; after Release it answers with the next step of
// the script (or the default).
func Hold() Step { return Step{kind: kindHold} }

// Func decides the step from the request. It runs on the server's handler
// goroutine, so it must be safe for concurrent use when requests overlap.
func Func(fn func(Request) Step) Step { return Step{kind: kindFunc, fn: fn} }
