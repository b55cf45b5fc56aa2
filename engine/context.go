package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// buildMessages rebuilds the model's context from the event log. The log is
// the source of truth; the context is derived:
//   - a user.message enters the context when a turn takes it (turn.started),
//     so input queued mid-turn is placed before the turn that answers it and
//     input cancelled before any turn took it stays out;
//   - a failed turn stays in the log for audit but leaves the context, its
//     input included (resume restarts from the checkpoint, so one input that
//     breaks a turn cannot break every later one; resume with retry records
//     that input again, as new input);
//   - context.compacted events shape what is left (see compactionView):
//     the latest summary stands in for the events it replaces, and the
//     tool results a compaction shortened are cut to their head.
//
// Events that cannot be decoded are left out; the error names each of them.
func buildMessages(evs []Event) ([]Message, error) {
	var unreadable []error
	payloads := make([]Payload, len(evs))
	failed := map[string]bool{}
	inputs := map[string]Input{}
	for i, ev := range evs {
		p, err := ev.Decode()
		if err != nil {
			unreadable = append(unreadable, err)
			continue
		}
		payloads[i] = p
		switch p := p.(type) {
		case TurnCompleted:
			if p.Outcome == OutcomeFailed {
				failed[ev.TurnID] = true
			}
		case Input:
			inputs[ev.ID] = p
		}
	}
	view := newCompactionView(evs, payloads)
	var b builder
	if view.summary != nil {
		b.userText(view.summaryText())
	}
	for i, ev := range evs {
		if failed[ev.TurnID] {
			continue
		}
		if view.replaced(ev, payloads[i]) {
			continue
		}
		switch p := payloads[i].(type) {
		case TurnStarted:
			for _, id := range p.InputIDs {
				if in, ok := inputs[id]; ok {
					b.userText(inputMessageText(in))
					b.user().files = append(b.user().files, in.Files...)
				}
			}
		case AgentMessage:
			if ev.TurnID == "" {
				continue // a notice to the person (a rate limit's), not the model's words
			}
			b.assistant().Text += p.Text
		case ToolCall:
			a := b.assistant()
			a.ToolCalls = append(a.ToolCalls, p.forModel())
		case SessionContext:
			b.userText("Context: " + p.Text)
		case ApprovalDecided, ApplySucceeded, ApplyFailed, ApplyUnconfirmed, ApprovalExpiry:
			b.userText(approvalNote(p))
		case ToolCallResult:
			u := b.user()
			u.ToolResults = append(u.ToolResults, ToolResult{
				CallID: p.ModelCallID(), Name: p.Name, Content: view.resultText(ev.Seq, p.Result.Text()), IsError: p.Result.IsError,
			})
		}
	}
	return b.msgs, errors.Join(unreadable...)
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

func inputMessageText(in Input) string {
	if a := in.Answer; a != nil {
		if a.Value != "" {
			return fmt.Sprintf("Answer to your question: %s (option value %q)", a.Text, a.Value)
		}
		return "Answer to your question: " + a.Text
	}
	return in.Text
}

// approvalNote tells the model what became of a proposal it made.
func approvalNote(p Payload) string {
	switch p := p.(type) {
	case ApprovalDecided:
		return decidedNote(p)
	case ApplySucceeded:
		return fmt.Sprintf("[approval %s: applied; output: %s]", p.ApprovalID, clip(string(p.Output), 2000))
	case ApplyFailed:
		return fmt.Sprintf("[approval %s: apply failed, nothing was changed: %s]", p.ApprovalID, p.Error)
	case ApplyUnconfirmed:
		return fmt.Sprintf("[approval %s: unconfirmed, it may or may not have been applied: %s]", p.ApprovalID, p.Error)
	case ApprovalExpiry:
		return fmt.Sprintf("[approval %s: expired without a decision; it was not applied]", p.ApprovalID)
	}
	return ""
}

// decidedNote is approvalNote's line for a decision: who decided, under
// which policy, and what they wrote (a deny's reason is what the model
// most needs to act on).
func decidedNote(p ApprovalDecided) string {
	verb := "approved"
	if p.Denied() {
		verb = "denied; it will not be applied"
	}
	by := p.By
	if len(p.Approvals) > 1 {
		names := make([]string, len(p.Approvals))
		for i, v := range p.Approvals {
			names[i] = v.By
		}
		by = strings.Join(names, " and ")
	}
	if p.ByPolicy() {
		by = "policy " + strconv.Quote(p.Policy) + " (applied without asking a person)"
	}
	note := fmt.Sprintf("[approval %s (%s %q): %s by %s", p.ApprovalID, p.Tool, p.Title, verb, by)
	switch {
	case p.Denied() && p.Comment != "":
		note += fmt.Sprintf("; reason: %q", p.Comment)
	case p.Comment != "":
		note += fmt.Sprintf("; comment: %q", p.Comment)
	}
	for _, v := range p.Approvals {
		if v.Comment != "" && v.By != p.By {
			note += fmt.Sprintf("; %s commented: %q", v.By, v.Comment)
		}
	}
	return note + "]"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
