// Package console renders session events for a terminal (brain chat). It
// imports only engine; reading the terminal is the caller's job.
package console

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"brain/engine"
	"brain/tools"
)

// maxShown bounds how much of a tool's input or result is printed.
const maxShown = 300

// Printer writes events as lines a person reads.
type Printer struct {
	W io.Writer
}

// Print renders one event; events a person need not see print nothing.
func (p Printer) Print(ev engine.Event) {
	switch ev.Type {
	case engine.EventAgentMessage:
		var d struct{ Text string }
		_ = json.Unmarshal(ev.Data, &d)
		fmt.Fprintf(p.W, "\n%s\n", strings.TrimSpace(d.Text))
	case engine.EventToolCall:
		var d struct {
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		fmt.Fprintf(p.W, "  -> %s %s\n", d.Name, clip(string(d.Input)))
	case engine.EventToolProgress:
		var d struct {
			Name string          `json:"name"`
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		fmt.Fprintf(p.W, "     %s: %s\n", d.Name, clip(string(d.Data)))
	case engine.EventToolResult:
		var d struct {
			Name   string `json:"name"`
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError        bool `json:"is_error"`
				UnknownOutcome bool `json:"unknown_outcome"`
			} `json:"result"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		var text []string
		for _, c := range d.Result.Content {
			text = append(text, c.Text)
		}
		mark := "<-"
		if d.Result.IsError {
			mark = "<- error:"
			if d.Result.UnknownOutcome {
				mark = "<- error (outcome unknown):"
			}
		}
		fmt.Fprintf(p.W, "  %s %s\n", mark, clip(strings.Join(text, " ")))
	case engine.EventQuestionAsked:
		var q engine.Question
		_ = json.Unmarshal(ev.Data, &q)
		fmt.Fprintf(p.W, "\n? %s\n", q.Text)
		for i, o := range q.Options {
			fmt.Fprintf(p.W, "  %d) %s\n", i+1, o.Label)
		}
		if len(q.Options) > 0 {
			fmt.Fprintln(p.W, "  (type a number, or write an answer)")
		}
	case engine.EventApprovalRequested:
		var d struct {
			ApprovalID string       `json:"approval_id"`
			Title      string       `json:"title"`
			Facts      []tools.Fact `json:"facts"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		fmt.Fprintf(p.W, "\n  [approval %s] %s\n", d.ApprovalID, d.Title)
		for _, f := range d.Facts {
			fmt.Fprintf(p.W, "    %s: %s\n", f.Label, clip(f.Value))
		}
	case engine.EventApprovalDecided, engine.EventApprovalApplied, engine.EventApprovalFailed,
		engine.EventApprovalUnconfirmed, engine.EventApprovalExpired:
		var d struct {
			ApprovalID string          `json:"approval_id"`
			Decision   string          `json:"decision"`
			By         string          `json:"by"`
			Output     json.RawMessage `json:"output"`
			Error      string          `json:"error"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		switch ev.Type {
		case engine.EventApprovalDecided:
			verb := "approved"
			if d.Decision == "deny" {
				verb = "denied"
			}
			fmt.Fprintf(p.W, "  [approval %s] %s by %s\n", d.ApprovalID, verb, d.By)
		case engine.EventApprovalApplied:
			fmt.Fprintf(p.W, "  [approval %s] applied: %s\n", d.ApprovalID, clip(string(d.Output)))
		case engine.EventApprovalExpired:
			fmt.Fprintf(p.W, "  [approval %s] expired\n", d.ApprovalID)
		default:
			fmt.Fprintf(p.W, "  [approval %s] %s: %s\n", d.ApprovalID, strings.TrimPrefix(ev.Type, "approval."), d.Error)
		}
	case engine.EventSessionError:
		var d struct{ Code, Message string }
		_ = json.Unmarshal(ev.Data, &d)
		fmt.Fprintf(p.W, "! %s: %s\n", d.Code, d.Message)
	case engine.EventTurnCompleted:
		var d struct{ Outcome string }
		_ = json.Unmarshal(ev.Data, &d)
		if d.Outcome != engine.OutcomeCompleted {
			fmt.Fprintf(p.W, "  (turn ended: %s)\n", d.Outcome)
		}
	}
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxShown {
		return string(r[:maxShown]) + "..."
	}
	return s
}
