package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// buildMessages rebuilds the model's context from the event log. The log is
// the source of truth; the context is derived:
//   - a user.message enters the context when a turn takes it (turn.started),
//     so input queued mid-turn is placed before the turn that answers it and
//     input cancelled before any turn took it stays out;
//   - the model's output and tool results of a failed turn stay in the log for
//     audit but leave the context (resume restarts from the checkpoint); the
//     input of that turn stays, since it was acknowledged.
func buildMessages(evs []Event) []Message {
	failed := map[string]bool{}
	inputs := map[string]Event{}
	for _, ev := range evs {
		switch ev.Type {
		case EventTurnCompleted:
			var d struct {
				Outcome string `json:"outcome"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && d.Outcome == OutcomeFailed {
				failed[ev.TurnID] = true
			}
		case EventUserMessage:
			inputs[ev.ID] = ev
		}
	}
	var b builder
	for _, ev := range evs {
		if failed[ev.TurnID] && ev.Type != EventTurnStarted {
			continue
		}
		switch ev.Type {
		case EventTurnStarted:
			var d struct {
				InputIDs []string `json:"input_ids"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			for _, id := range d.InputIDs {
				if in, ok := inputs[id]; ok {
					b.userText(inputMessageText(in))
				}
			}
		case EventAgentMessage:
			var d struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			b.assistant().Text += d.Text
		case EventToolCall:
			var c ToolCall
			if json.Unmarshal(ev.Data, &c) == nil {
				a := b.assistant()
				a.ToolCalls = append(a.ToolCalls, c)
			}
		case EventSessionContext:
			var d struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			b.userText("Context: " + d.Text)
		case EventApprovalDecided, EventApprovalApplied, EventApprovalFailed, EventApprovalUnconfirmed, EventApprovalExpired:
			b.userText(approvalNote(ev))
		case EventToolResult:
			var d toolResultData
			if json.Unmarshal(ev.Data, &d) == nil {
				u := b.user()
				u.ToolResults = append(u.ToolResults, ToolResult{
					CallID: d.CallID, Name: d.Name, Content: d.Result.text(), IsError: d.Result.IsError,
				})
			}
		}
	}
	return b.msgs
}

// builder appends to the last message when the role matches, so the result
// alternates user/assistant as the providers require.
type builder struct{ msgs []Message }

func (b *builder) last(role Role) *Message {
	if n := len(b.msgs); n > 0 && b.msgs[n-1].Role == role {
		return &b.msgs[n-1]
	}
	b.msgs = append(b.msgs, Message{Role: role})
	return &b.msgs[len(b.msgs)-1]
}

func (b *builder) assistant() *Message { return b.last(RoleAssistant) }
func (b *builder) user() *Message      { return b.last(RoleUser) }

func (b *builder) userText(text string) {
	u := b.user()
	if u.Text != "" {
		u.Text += "\n\n"
	}
	u.Text += text
}

func inputMessageText(ev Event) string {
	var in Input
	_ = json.Unmarshal(ev.Data, &in)
	if a := in.Answer; a != nil {
		if a.Value != "" {
			return fmt.Sprintf("Answer to your question: %s (option value %q)", a.Text, a.Value)
		}
		return "Answer to your question: " + a.Text
	}
	return in.Text
}

// approvalNote tells the model what became of a proposal it made.
func approvalNote(ev Event) string {
	var d struct {
		ApprovalID string          `json:"approval_id"`
		Tool       string          `json:"tool"`
		Title      string          `json:"title"`
		Decision   string          `json:"decision"`
		By         string          `json:"by"`
		Output     json.RawMessage `json:"output"`
		Error      string          `json:"error"`
	}
	_ = json.Unmarshal(ev.Data, &d)
	switch ev.Type {
	case EventApprovalDecided:
		verb := "approved"
		if d.Decision == "deny" {
			verb = "denied; it will not be applied"
		}
		return fmt.Sprintf("[approval %s (%s %q): %s by %s]", d.ApprovalID, d.Tool, d.Title, verb, d.By)
	case EventApprovalApplied:
		return fmt.Sprintf("[approval %s: applied; output: %s]", d.ApprovalID, clip(string(d.Output), 2000))
	case EventApprovalFailed:
		return fmt.Sprintf("[approval %s: apply failed, nothing was changed: %s]", d.ApprovalID, d.Error)
	case EventApprovalUnconfirmed:
		return fmt.Sprintf("[approval %s: unconfirmed, it may or may not have been applied: %s]", d.ApprovalID, d.Error)
	case EventApprovalExpired:
		return fmt.Sprintf("[approval %s: expired without a decision; it was not applied]", d.ApprovalID)
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// toolResultData is the data of a tool.result event.
type toolResultData struct {
	CallID string        `json:"call_id"`
	Name   string        `json:"name"`
	Result toolResultDoc `json:"result"`
}

type toolResultDoc struct {
	Content        []contentPart `json:"content"`
	IsError        bool          `json:"is_error"`
	UnknownOutcome bool          `json:"unknown_outcome"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (d toolResultDoc) text() string {
	var parts []string
	for _, c := range d.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}
