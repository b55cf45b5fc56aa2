package tools

import (
	"context"
	"encoding/json"
	"fmt"
)

// Elicitation is a tool's request for input from the person during a call
// (an MCP server's elicitation/create). Exactly one of URL and Fields is
// set: URL mode sends the person to a page (brain never fetches it),
// form mode asks for the named fields.
type Elicitation struct {
	// Message says what is asked and why, in the tool's words.
	Message string  `json:"message"`
	URL     string  `json:"url,omitempty"`
	Fields  []Field `json:"fields,omitempty"`
}

// Field is one input of a form-mode Elicitation. Type is "string",
// "number", "integer" or "boolean"; a string with Choices is an enum.
type Field struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type"`
	Choices     []Choice `json:"choices,omitempty"`
	Default     any      `json:"default,omitempty"`
	Required    bool     `json:"required,omitempty"`
}

// Choice is one allowed value of an enum Field.
type Choice struct {
	Value string `json:"value"`
	Label string `json:"label,omitempty"`
}

// Reply actions: the person gave the input, said no, or dismissed the
// request without choosing.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Reply is the person's answer to an Elicitation. Content holds the
// accepted form's values by field name (nil in URL mode); Reason, on a
// decline brain made itself, says why (the tool passes it on).
type Reply struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Reason  string         `json:"reason,omitempty"`
}

// InputRequired is returned by a tool's Run when the call cannot finish
// without the person's input and the tool can be called again later with
// the answer (MCP 2026-07-28 multi round-trip requests). The engine asks
// the person, ends the turn, and once they answer runs the tool once more
// with the same arguments and Call.Resume set. State is opaque to the
// engine and stored with the question; it must hold no secret.
type InputRequired struct {
	Elicitation Elicitation
	State       json.RawMessage
}

func (e *InputRequired) Error() string {
	return fmt.Sprintf("the tool needs input from the person: %s", e.Elicitation.Message)
}

// Resume is what a tool that returned InputRequired is called again with:
// the State it returned and the person's Reply.
type Resume struct {
	State json.RawMessage `json:"state"`
	Reply Reply           `json:"reply"`
}

// ElicitFunc asks the person for input while a call waits (MCP
// 2025-11-25 elicitation/create). It blocks until they answer, ctx ends,
// or the engine decides nobody can answer (then the Reply is a decline
// with a Reason).
type ElicitFunc func(ctx context.Context, e Elicitation) (Reply, error)
