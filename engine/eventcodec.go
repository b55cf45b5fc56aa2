package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// NewEvent returns an event of p's type carrying p as its data; the caller
// sets ID and TurnID. It fails only for JSON fields (json.RawMessage) that
// hold invalid JSON, except a ToolCall's Input (see encodeToolCall).
func NewEvent(p Payload) (Event, error) {
	var data []byte
	var err error
	if c, ok := p.(ToolCall); ok {
		data, err = encodeToolCall(c)
	} else {
		data, err = json.Marshal(p)
	}
	if err != nil {
		return Event{}, fmt.Errorf("encode %s: %w", p.EventType(), err)
	}
	return Event{Type: p.EventType(), Data: data}, nil
}

// encodeToolCall records the model's arguments even when they are not
// JSON: they are kept as a JSON string, in the shape earlier versions wrote
// for them ({call_id, input, name}, then provider_call_id when set).
// Decoding gives that string as Input; an Input that is a JSON string is
// written in the same shape, so it re-encodes to the same bytes.
func encodeToolCall(c ToolCall) ([]byte, error) {
	data, err := json.Marshal(c)
	if err == nil && !isJSONString(c.Input) {
		return data, nil
	}
	input := c.Input
	if err != nil {
		if input, err = json.Marshal(string(c.Input)); err != nil {
			return nil, err
		}
	}
	return json.Marshal(struct {
		CallID     string          `json:"call_id"`
		Input      json.RawMessage `json:"input"`
		Name       string          `json:"name"`
		ProviderID string          `json:"provider_call_id,omitempty"`
	}{c.ID, input, c.Name, c.ProviderID})
}

func isJSONString(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '"'
}

// Decode returns the event's payload, a value of the type named after the
// event type (AgentMessage for agent.message, Input for user.message ...).
// Data that does not fit its type is an error. An event type this version
// does not know decodes to nil and no error, so readers pass over events a
// newer version wrote. Empty data reads as {}, as the store writes it.
func (e Event) Decode() (Payload, error) {
	var p Payload
	var err error
	switch e.Type {
	case EventUserMessage:
		p, err = decodeAs[Input](e.Data)
	case EventAgentMessage:
		p, err = decodeAs[AgentMessage](e.Data)
	case EventToolCall:
		p, err = decodeAs[ToolCall](e.Data)
	case EventToolProgress:
		p, err = decodeAs[ToolProgress](e.Data)
	case EventToolResult:
		p, err = decodeAs[ToolCallResult](e.Data)
	case EventQuestionAsked:
		p, err = decodeAs[Question](e.Data)
	case EventApprovalRequested:
		p, err = decodeAs[ApprovalRequested](e.Data)
	case EventApprovalDecided:
		p, err = decodeAs[ApprovalDecided](e.Data)
	case EventApprovalApplied:
		p, err = decodeAs[ApplySucceeded](e.Data)
	case EventApprovalFailed:
		p, err = decodeAs[ApplyFailed](e.Data)
	case EventApprovalUnconfirmed:
		p, err = decodeAs[ApplyUnconfirmed](e.Data)
	case EventApprovalExpired:
		p, err = decodeAs[ApprovalExpiry](e.Data)
	case EventApprovalRetried:
		p, err = decodeAs[ApprovalRetried](e.Data)
	case EventApprovalVoted:
		p, err = decodeAs[ApprovalVoted](e.Data)
	case EventApprovalReminder:
		p, err = decodeAs[ApprovalReminder](e.Data)
	case EventResultCommitted:
		p, err = decodeAs[ResultRecord](e.Data)
	case EventSessionError:
		p, err = decodeAs[SessionError](e.Data)
	case EventSessionContext:
		p, err = decodeAs[SessionContext](e.Data)
	case EventSessionStatus:
		p, err = decodeAs[SessionStatus](e.Data)
	case EventTurnStarted:
		p, err = decodeAs[TurnStarted](e.Data)
	case EventTurnCompleted:
		p, err = decodeAs[TurnCompleted](e.Data)
	case EventPlanUpdated:
		p, err = decodeAs[PlanUpdated](e.Data)
	case EventSkillLoaded:
		p, err = decodeAs[SkillLoaded](e.Data)
	case EventFeedbackGiven:
		p, err = decodeAs[FeedbackGiven](e.Data)
	case EventContextCompacted:
		p, err = decodeAs[ContextCompacted](e.Data)
	case EventMemoryChanged:
		p, err = decodeAs[MemoryChanged](e.Data)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s event %d (%s): %w", e.Type, e.Seq, e.ID, err)
	}
	return p, nil
}

func decodeAs[T Payload](data json.RawMessage) (Payload, error) {
	var v T
	if len(data) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// MarshalJSON writes the two shapes of turn.completed (see TurnCompleted).
func (p TurnCompleted) MarshalJSON() ([]byte, error) {
	if p.Outcome == OutcomeFailed {
		return json.Marshal(struct {
			Code    string  `json:"code"`
			Outcome Outcome `json:"outcome"`
		}{p.Code, p.Outcome})
	}
	return json.Marshal(struct {
		Outcome Outcome `json:"outcome"`
		Rounds  int     `json:"rounds"`
		Usage   Usage   `json:"usage"`
	}{p.Outcome, p.Rounds, p.Usage})
}
