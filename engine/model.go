package engine

import (
	"context"
	"encoding/json"
	"fmt"
)

// Model is a language model provider. Adapters live in engine/model.
type Model interface {
	Generate(ctx context.Context, req ModelRequest) (ModelResponse, error)
}

// ModelRequest is one call to the model.
type ModelRequest struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens caps the answer; zero means the adapter's configured value.
	MaxTokens int
	// SessionID and TurnID name the turn asking, for wrappers that
	// observe model calls (tracing); adapters ignore them.
	SessionID string
	TurnID    string
	// OnDelta, when set, is called with each piece of the answer's text as
	// it arrives, in order, before Generate returns; the pieces add up to
	// ModelResponse.Text. It must return quickly. Adapters that cannot
	// stream may leave it uncalled.
	OnDelta func(text string)
}

// Role of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one conversation entry. Messages alternate user/assistant; a
// user message may carry tool results (for the previous assistant message's
// calls) and text; an assistant message may carry text and tool calls.
type Message struct {
	Role        Role
	Text        string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	// Attachments are files shared with a user message (see Attachment).
	Attachments []Attachment
	// files are the refs buildMessages found, loaded by attachFiles.
	files []FileRef
}

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// ToolCall is the model asking to run a tool.
//
// Between the engine and a Model (ModelResponse, Message) ID is the id the
// provider gave the call. In the log (the tool.call event) ID is brain's
// own id for the call, unique in its session, and ProviderID the
// provider's: a provider may reuse ids, so the idempotency key, approvals,
// questions and results use brain's id, while the model's context pairs
// each result with the provider's. Events written before brain minted its
// own ids hold only ID, the provider's; ModelID reads both.
type ToolCall struct {
	ID         string          `json:"call_id"`
	Name       string          `json:"name"`
	Input      json.RawMessage `json:"input"`
	ProviderID string          `json:"provider_call_id,omitempty"`
}

// ModelID is the id the model knows the call by.
func (c ToolCall) ModelID() string {
	if c.ProviderID != "" {
		return c.ProviderID
	}
	return c.ID
}

// forModel is the call as a Model sees it: under the provider's id.
func (c ToolCall) forModel() ToolCall {
	return ToolCall{ID: c.ModelID(), Name: c.Name, Input: c.Input}
}

// ToolResult answers one ToolCall; CallID is the provider's id of the call.
type ToolResult struct {
	CallID  string
	Name    string
	Content string
	IsError bool
}

// ModelResponse is the model's answer.
type ModelResponse struct {
	// Model is the model that answered, as the provider names it (tools
	// see it in their call context); empty when the adapter does not say.
	Model      string
	Text       string
	ToolCalls  []ToolCall
	StopReason string
	Usage      Usage
}

// Usage counts tokens. InputTokens is all the input, cached or not;
// CacheReadTokens of it were read from the provider's prompt cache (billed
// at a fraction) and CacheWriteTokens written to it (Anthropic bills those
// at a premium); the rest was billed at the plain input price. The cache
// fields are left out of the JSON when zero, so turn.completed events
// without caching keep the shape earlier versions wrote.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_input_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_creation_input_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// UncachedInputTokens is the input billed at the plain input price.
func (u Usage) UncachedInputTokens() int64 {
	return u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
}

// ProviderError is a model provider failure. Transient failures (timeouts,
// rate limits and 5xx after the SDK's own retries, dropped connections)
// interrupt the session; permanent ones (bad credentials, invalid request)
// fail it.
type ProviderError struct {
	Transient bool
	// Status is the HTTP status, 0 when none was received.
	Status int
	// Code is short and stable: "provider_unavailable", "provider_auth", ...
	Code    string
	Message string
	// ContextExceeded marks the provider's refusal of a request longer
	// than the model's context window (Anthropic's "prompt is too long",
	// OpenAI's context_length_exceeded): the engine compacts the history
	// once and retries.
	ContextExceeded bool
}

func (e *ProviderError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Provider error codes.
const (
	ProviderAuth           = "provider_auth"
	ProviderInvalidRequest = "provider_invalid_request"
	ProviderRateLimited    = "provider_rate_limited"
	ProviderUnavailable    = "provider_unavailable"
	ProviderUnreachable    = "provider_unreachable"
	ProviderNotConfigured  = "provider_not_configured"
)

// ClassifyStatus maps a provider's HTTP status to a ProviderError. Status 0
// means no answer arrived (connection refused, timeout).
func ClassifyStatus(status int, message string) *ProviderError {
	e := &ProviderError{Status: status, Message: message}
	switch {
	case status == 0:
		e.Code, e.Transient = ProviderUnreachable, true
	case status == 401 || status == 403:
		e.Code = ProviderAuth
	case status == 408 || status == 409:
		e.Code, e.Transient = ProviderUnavailable, true
	case status == 429:
		e.Code, e.Transient = ProviderRateLimited, true
	case status >= 500:
		e.Code, e.Transient = ProviderUnavailable, true
	default:
		e.Code = ProviderInvalidRequest
	}
	return e
}
