package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"brain/tools"
)

// Approval modes a ServerConfig may name, for the server or per tool.
const (
	// ApprovalNever runs every call the moment the model makes it.
	ApprovalNever = "never"
	// ApprovalAlways makes every call wait for a person's approval.
	ApprovalAlways = "always"
	// ApprovalAnnotations makes a call wait unless the server marks the
	// tool read-only (readOnlyHint true, destructiveHint not true).
	ApprovalAnnotations = "annotations"
)

// approvalNote ends the description of a tool that waits, the way every
// approval tool tells the model.
const approvalNote = " It waits for a person's approval; nothing is sent to the server until they approve."

// maxCardText caps a card fact quoted from the server (its description).
const maxCardText = 1000

// annotations are the hints a server gives about a tool. Absent hints take
// the protocol's defaults: not read-only, destructive.
type annotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    *bool  `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint"`
}

// validApproval reports whether mode names an approval mode ("" is the
// default, never).
func validApproval(mode string) bool {
	switch mode {
	case "", ApprovalNever, ApprovalAlways, ApprovalAnnotations:
		return true
	}
	return false
}

// waits reports whether calls of the server tool t wait for approval: the
// tool's own mode when the config names one, else the server's.
func (c ServerConfig) waits(t listedTool) bool {
	mode := c.Approval
	if m, ok := c.ToolApproval[t.Name]; ok && m != "" {
		mode = m
	}
	switch mode {
	case ApprovalAlways:
		return true
	case ApprovalAnnotations:
		a := t.Annotations
		readOnly := a.ReadOnlyHint != nil && *a.ReadOnlyHint
		destructive := a.DestructiveHint != nil && *a.DestructiveHint
		return !readOnly || destructive
	}
	return false
}

// approvalTool makes d, a server tool's definition with Run, wait for
// approval: Preview shows the call as facts and sends nothing; Apply sends
// the approved arguments in one tools/call. A call whose answer is lost is
// an unknown outcome, which the engine records as unconfirmed and never
// re-sends by itself.
func (s *server) approvalTool(d tools.Definition, t listedTool) tools.Definition {
	name, mcpName := d.Name, t.Name
	title := strings.TrimSpace(t.Title)
	if title == "" {
		title = strings.TrimSpace(t.Annotations.Title)
	}
	desc := strings.TrimSpace(t.Description)
	d.Run = nil
	d.Description += approvalNote
	d.Preview = func(_ context.Context, call tools.Call) (tools.Card, error) {
		facts := []tools.Fact{{Label: "Tool", Value: mcpName}, {Label: "Server", Value: s.cfg.ID}}
		if title != "" {
			facts = append(facts, tools.Fact{Label: "Title", Value: clip(title, maxCardText)})
		}
		if desc != "" {
			facts = append(facts, tools.Fact{Label: "Description", Value: clip(desc, maxCardText)})
		}
		facts = append(facts, tools.Fact{Label: "Arguments", Value: arguments(call.Input)})
		head := mcpName
		if title != "" {
			head = title
		}
		return tools.Card{Title: fmt.Sprintf("%s on %s", head, s.cfg.ID), Facts: facts}, nil
	}
	d.Apply = func(ctx context.Context, call tools.Call, _ tools.Decision) (json.RawMessage, error) {
		return s.callTool(ctx, name, mcpName, call)
	}
	return d
}

// arguments is the call's input as the exact JSON the server will get.
func arguments(input json.RawMessage) string {
	in := strings.TrimSpace(string(input))
	if in == "" {
		return "{}"
	}
	return in
}
