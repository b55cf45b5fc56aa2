// Package console renders session events for a terminal (brain chat). It
// imports only engine; reading the terminal is the caller's job.
package console

import (
	"fmt"
	"io"
	"strings"

	"brain/engine"
)

// maxShown bounds how much of a tool's input or result is printed.
const maxShown = 300

// Printer writes events as lines a person reads. Use it by pointer when
// it prints deltas: it remembers the text already shown.
type Printer struct {
	W io.Writer

	streamed string // the current round's text printed from deltas
}

// Delta prints streamed text as it arrives; the round's agent.message then
// prints only what the deltas did not show.
func (p *Printer) Delta(d engine.Delta) {
	if p.streamed == "" {
		fmt.Fprint(p.W, "\n")
		d.Text = strings.TrimLeft(d.Text, " \n")
		if d.Text == "" {
			return
		}
	}
	fmt.Fprint(p.W, d.Text)
	p.streamed += d.Text
}

// Print renders one event; events a person need not see print nothing, and
// one that cannot be decoded prints the error.
func (p *Printer) Print(ev engine.Event) {
	payload, err := ev.Decode()
	if err != nil {
		fmt.Fprintf(p.W, "! %v\n", err)
		return
	}
	switch d := payload.(type) {
	case engine.AgentMessage:
		text := strings.TrimSpace(d.Text)
		shown := strings.TrimSpace(p.streamed)
		p.streamed = ""
		if rest, ok := strings.CutPrefix(text, shown); ok && shown != "" {
			fmt.Fprintf(p.W, "%s\n", rest)
			return
		}
		if shown != "" {
			fmt.Fprintln(p.W) // what streamed differs: show the recorded text whole
		}
		fmt.Fprintf(p.W, "\n%s\n", text)
	case engine.ToolCall:
		fmt.Fprintf(p.W, "  -> %s %s\n", d.Name, clip(string(d.Input)))
	case engine.ToolProgress:
		fmt.Fprintf(p.W, "     %s: %s\n", d.Name, clip(string(d.Data)))
	case engine.ToolCallResult:
		mark := "<-"
		if d.Result.IsError {
			mark = "<- error:"
			if d.Result.UnknownOutcome {
				mark = "<- error (outcome unknown):"
			}
		}
		fmt.Fprintf(p.W, "  %s %s\n", mark, clip(d.Result.Text()))
	case engine.Question:
		fmt.Fprintf(p.W, "\n? %s\n", d.Text)
		for i, o := range d.Options {
			fmt.Fprintf(p.W, "  %d) %s\n", i+1, o.Label)
		}
		if len(d.Options) > 0 {
			fmt.Fprintln(p.W, "  (type a number, or write an answer)")
		}
	case engine.ApprovalRequested:
		fmt.Fprintf(p.W, "\n  [approval %s] %s\n", d.ApprovalID, d.Title)
		for _, f := range d.Facts {
			fmt.Fprintf(p.W, "    %s: %s\n", f.Label, clip(f.Value))
		}
	case engine.ApprovalDecided:
		verb := "approved"
		if d.Denied() {
			verb = "denied"
		}
		fmt.Fprintf(p.W, "  [approval %s] %s by %s\n", d.ApprovalID, verb, d.By)
		if d.Comment != "" {
			label := "comment"
			if d.Denied() {
				label = "reason"
			}
			fmt.Fprintf(p.W, "    %s: %s\n", label, clip(d.Comment))
		}
	case engine.ApprovalVoted:
		fmt.Fprintf(p.W, "  [approval %s] %d of %d approvals (%s)\n", d.ApprovalID, d.Count, d.Required, d.By)
	case engine.ApprovalReminder:
		fmt.Fprintf(p.W, "  [approval %s] expires %s\n", d.ApprovalID, d.ExpiresAt.Local().Format("2006-01-02 15:04"))
	case engine.ApplySucceeded:
		fmt.Fprintf(p.W, "  [approval %s] applied: %s\n", d.ApprovalID, clip(string(d.Output)))
	case engine.ApprovalExpiry:
		fmt.Fprintf(p.W, "  [approval %s] expired\n", d.ApprovalID)
	case engine.ApplyFailed:
		fmt.Fprintf(p.W, "  [approval %s] failed: %s\n", d.ApprovalID, d.Error)
	case engine.ApplyUnconfirmed:
		fmt.Fprintf(p.W, "  [approval %s] unconfirmed: %s\n", d.ApprovalID, d.Error)
	case engine.SessionError:
		fmt.Fprintf(p.W, "! %s: %s\n", d.Code, d.Message)
	case engine.TurnCompleted:
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
