// Package console renders session events for a terminal (brain chat). It
// imports only engine; reading the terminal is the caller's job.
package console

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"brain/engine"
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
