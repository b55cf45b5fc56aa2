package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"brain/tools"
)

// A tool may need the person's input to finish a call (an MCP server's
// elicitation). With a tool that can be called again later with the
// answer (tools.InputRequired: MCP 2026-07-28 multi round-trip requests),
// the engine opens a question like ask does and ends the turn; the
// question holds the call (PendingCall). The answer, recorded as input
// like any answer, carries the call with it, and the turn that takes the
// answer first sends the call again, once, with the person's reply. That
// is durable: the question and the answer are in the log, so neither a
// restart nor another replica changes the outcome, and the re-sent call
// is a tool.call like any other (one that never got its result is an
// unknown outcome, never sent a third time).

// PendingCall is a tool call waiting for the person's input.
type PendingCall struct {
	Tool        string            `json:"tool"`
	Input       json.RawMessage   `json:"input"`
	State       json.RawMessage   `json:"state,omitempty"`
	Elicitation tools.Elicitation `json:"elicitation"`
	// Held marks a call that waits in process for the answer (held.go):
	// the answer goes back to it and starts no turn.
	Held bool `json:"held,omitempty"`
}

// Option values of an elicitation's question besides the form's own.
const (
	elicitAccept  = "elicit:accept"
	elicitDone    = "elicit:done"
	elicitDecline = "elicit:decline"
	elicitCancel  = "elicit:cancel"
)

// maxInlineRounds bounds how often a call a server keeps asking about is
// sent again at once with a decline (sessions nobody can answer).
const maxInlineRounds = 3

// inputRequired handles a tool's request for the person's input: in a
// session nobody can answer, or when the turn already asked something,
// the call is sent again at once with a decline that says why; else a
// question opens and the turn ends.
func (e *Engine) inputRequired(ctx context.Context, t *turn, call ToolCall, run func(context.Context, *tools.Resume) (json.RawMessage, toolOutcome, *tools.InputRequired), ir *tools.InputRequired) toolOutcome {
	for range maxInlineRounds {
		reason := ""
		switch {
		case !t.session.Interactive:
			reason = nobodyThere(t.session, "answer the tool's request for input")
		case !t.claimQuestion():
			reason = "another question is open in this turn; brain asks one at a time"
		default:
			q := elicitQuestion(e.newID("q"), t.id, call, ir)
			t.setQuestion(q)
			return toolOutcome{question: q, Text: fmt.Sprintf("%s asked the person for input (%q) and the question was shown to them. "+
				"Your turn ends now; when they answer, the call is sent again with their answer and its result arrives with their message.", call.Name, ir.Elicitation.Message)}
		}
		e.log.Info("tool's request for input declined", tools.LogTool, call.Name, tools.LogSession, t.session.ID, tools.LogReason, reason)
		_, out, again := run(ctx, &tools.Resume{State: ir.State, Reply: tools.Reply{Action: tools.ActionDecline, Reason: reason}})
		if again == nil {
			if !out.IsError {
				out.Text = fmt.Sprintf("The tool asked for a person's input; it was declined (%s). The tool then answered: %s", reason, out.Text)
			}
			return out
		}
		ir = again
	}
	return failed("%s kept asking for a person's input after it was declined; the call did not complete", call.Name)
}

// elicitQuestion is the question that shows a tool's request for input.
func elicitQuestion(id, turnID string, call ToolCall, ir *tools.InputRequired) *Question {
	el := ir.Elicitation
	var b strings.Builder
	fmt.Fprintf(&b, "The tool %s asks: %s", call.Name, strings.TrimSpace(el.Message))
	var opts []Option
	switch {
	case el.URL != "":
		fmt.Fprintf(&b, "\n\nOpen %s, then choose Done.", el.URL)
		opts = append(opts, Option{Label: "Done", Value: elicitDone})
	case len(el.Fields) == 1 && choices(el.Fields[0]) != nil:
		opts = append(opts, choices(el.Fields[0])...)
	default:
		allDefaults := true
		for _, f := range el.Fields {
			fmt.Fprintf(&b, "\n• %s", describeField(f))
			if f.Required && f.Default == nil {
				allDefaults = false
			}
		}
		if len(el.Fields) == 1 {
			b.WriteString("\n\nReply with the value.")
		} else if len(el.Fields) > 1 {
			b.WriteString("\n\nReply with one \"name: value\" line per field.")
		}
		if allDefaults {
			opts = append(opts, Option{Label: "Accept as is", Value: elicitAccept})
		}
	}
	opts = append(opts, Option{Label: "Decline", Value: elicitDecline}, Option{Label: "Cancel", Value: elicitCancel})
	text := clipRunes(b.String(), 4000)
	return &Question{ID: id, Text: text, Options: opts, CallID: call.ID, TurnID: turnID,
		Call: &PendingCall{Tool: call.Name, Input: call.Input, State: ir.State, Elicitation: el}}
}

// choices are a field's values as options, when it is a choice of at most
// four (room for Decline and Cancel under ask's six).
func choices(f tools.Field) []Option {
	var out []Option
	switch {
	case f.Type == "boolean":
		out = []Option{{Label: "Yes", Value: "true"}, {Label: "No", Value: "false"}}
	case len(f.Choices) > 0 && len(f.Choices) <= 4:
		for _, c := range f.Choices {
			label := c.Label
			if label == "" {
				label = c.Value
			}
			out = append(out, Option{Label: clipRunes(label, 80), Value: clipRunes("v:"+c.Value, 80)})
		}
	}
	return out
}

func describeField(f tools.Field) string {
	s := f.Name
	if f.Title != "" {
		s += " (" + f.Title + ")"
	}
	s += ": " + f.Type
	if len(f.Choices) > 0 {
		vals := make([]string, len(f.Choices))
		for i, c := range f.Choices {
			vals[i] = c.Value
		}
		s += ", one of " + strings.Join(vals, ", ")
	}
	if f.Default != nil {
		s += fmt.Sprintf(", default %v", f.Default)
	} else if f.Required {
		s += ", required"
	}
	if f.Description != "" {
		s += ". " + f.Description
	}
	return s
}

// replyOf reads the person's answer to an elicitation's question.
func replyOf(p *PendingCall, a Answer) tools.Reply {
	switch a.Value {
	case elicitDecline:
		return tools.Reply{Action: tools.ActionDecline}
	case elicitCancel:
		return tools.Reply{Action: tools.ActionCancel}
	case elicitAccept, elicitDone:
		return tools.Reply{Action: tools.ActionAccept}
	}
	el := p.Elicitation
	if el.URL != "" {
		return tools.Reply{Action: tools.ActionAccept}
	}
	content := map[string]any{}
	switch {
	case len(el.Fields) == 1:
		raw := a.Value
		if raw == "" {
			raw = a.Text
		}
		v, err := fieldValue(el.Fields[0], strings.TrimPrefix(raw, "v:"))
		if err != nil {
			return tools.Reply{Action: tools.ActionCancel, Reason: err.Error()}
		}
		content[el.Fields[0].Name] = v
	default:
		for _, line := range strings.Split(a.Text, "\n") {
			name, raw, ok := strings.Cut(line, ":")
			if !ok {
				name, raw, ok = strings.Cut(line, "=")
			}
			if !ok {
				continue
			}
			for _, f := range el.Fields {
				if strings.EqualFold(strings.TrimSpace(name), f.Name) {
					v, err := fieldValue(f, raw)
					if err != nil {
						return tools.Reply{Action: tools.ActionCancel, Reason: err.Error()}
					}
					content[f.Name] = v
				}
			}
		}
	}
	return tools.Reply{Action: tools.ActionAccept, Content: content}
}

// fieldValue converts typed text to a field's type.
func fieldValue(f tools.Field, raw string) (any, error) {
	s := strings.TrimSpace(raw)
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "true", "yes", "y":
			return true, nil
		case "false", "no", "n":
			return false, nil
		}
	case "integer":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	case "number":
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			return n, nil
		}
	default:
		if len(f.Choices) == 0 {
			return s, nil
		}
		for _, c := range f.Choices {
			if strings.EqualFold(s, c.Value) || strings.EqualFold(s, c.Label) {
				return c.Value, nil
			}
		}
	}
	return nil, fmt.Errorf("%q is not a valid %s for %s", s, f.Type, f.Name)
}

// resumeAnswered sends again, once each, the calls whose question the
// turn's input answers, before the model runs: the model then reads the
// answer followed by the call's result.
func (e *Engine) resumeAnswered(ctx context.Context, t *turn) error {
	for _, ev := range t.inputs {
		p, err := ev.Decode()
		in, ok := p.(Input)
		if err != nil || !ok || in.Answer == nil || in.Answer.Call == nil || in.Answer.Call.Held {
			continue
		}
		pc := in.Answer.Call
		calls, err := e.recordResponse(context.WithoutCancel(ctx), t, ModelResponse{ToolCalls: []ToolCall{{Name: pc.Tool, Input: pc.Input}}})
		if err != nil {
			return err
		}
		if t.resume == nil {
			t.resume = map[string]*tools.Resume{}
		}
		t.resume[calls[0].ID] = &tools.Resume{State: pc.State, Reply: replyOf(pc, *in.Answer)}
		results, err := e.runCalls(ctx, t, calls)
		if err != nil {
			return err
		}
		t.messages = append(t.messages, Message{Role: RoleUser, ToolResults: results})
	}
	return nil
}

// claimQuestion reserves the turn's one question for a tool's request
// for input; calls may run in parallel.
func (t *turn) claimQuestion() bool {
	return t.asking.CompareAndSwap(false, true) && t.question == nil
}

// setQuestion is called only by the call that claimed the question; the
// loop reads it after every call of the round returned.
func (t *turn) setQuestion(q *Question) { t.question = q }

// asInputRequired unwraps a tool's request for input.
func asInputRequired(err error) *tools.InputRequired {
	var ir *tools.InputRequired
	if errors.As(err, &ir) {
		return ir
	}
	return nil
}
