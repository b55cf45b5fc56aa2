package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"brain/engine"
)

// params maps an engine request onto the Messages API.
func (m *Model) params(req engine.ModelRequest) (anthropic.MessageNewParams, error) {
	msgs, err := messages(req.Messages)
	if err != nil {
		return anthropic.MessageNewParams{}, err
	}
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(m.model),
		MaxTokens: m.maxTokens,
		Messages:  msgs,
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: inputSchema(t.InputSchema)}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	addCacheBreakpoints(&p)
	return p, nil
}

// inputSchema sends the tool's JSON Schema verbatim. Decoding it into the
// SDK's struct would keep only properties and required and drop the rest
// ($defs, additionalProperties, descriptions of nested keywords).
func inputSchema(raw json.RawMessage) anthropic.ToolInputSchemaParam {
	if len(raw) == 0 || string(raw) == "null" {
		return anthropic.ToolInputSchemaParam{} // marshals as {"type":"object"}
	}
	return param.Override[anthropic.ToolInputSchemaParam](raw)
}

// messages maps the history. Consecutive messages of one role are merged,
// since the API wants roles to alternate; in a user message the
// tool_result blocks come first, as the API requires after a tool_use.
func messages(in []engine.Message) ([]anthropic.MessageParam, error) {
	out := make([]anthropic.MessageParam, 0, len(in))
	var (
		role    engine.Role
		results []anthropic.ContentBlockParamUnion // user: tool results
		rest    []anthropic.ContentBlockParamUnion // text, tool_use
	)
	flush := func() {
		if len(results)+len(rest) == 0 {
			return
		}
		blocks := append(results, rest...)
		if role == engine.RoleAssistant {
			out = append(out, anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: blocks}})
		} else {
			out = append(out, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: blocks}})
		}
		results, rest = nil, nil
	}
	for _, msg := range in {
		if msg.Role != engine.RoleUser && msg.Role != engine.RoleAssistant {
			return nil, &engine.ProviderError{
				Code:    engine.ProviderInvalidRequest,
				Message: "anthropic: unknown message role " + string(msg.Role),
			}
		}
		if msg.Role != role {
			flush()
			role = msg.Role
		}
		for _, r := range msg.ToolResults {
			results = append(results, toolResult(r))
		}
		// The API refuses empty text blocks.
		if msg.Text != "" {
			rest = append(rest, anthropic.NewTextBlock(msg.Text))
		}
		rest = append(rest, attachmentBlocks(msg.Attachments)...)
		for _, c := range msg.ToolCalls {
			rest = append(rest, anthropic.NewToolUseBlock(c.ID, historyInput(c.Input), c.Name))
		}
	}
	flush()
	return out, nil
}

func toolResult(r engine.ToolResult) anthropic.ContentBlockParamUnion {
	b := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.IsError {
		b.IsError = anthropic.Bool(true)
	}
	// An empty text block is refused even inside a tool result.
	if r.Content != "" {
		b.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: r.Content}}}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &b}
}

// response maps the accumulated message. Text blocks are joined as they
// are: the API splits one answer into several blocks (around citations).
func response(msg anthropic.Message) engine.ModelResponse {
	resp := engine.ModelResponse{
		Model:      string(msg.Model),
		StopReason: string(msg.StopReason),
		Usage:      usage(msg.Usage),
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			resp.ToolCalls = append(resp.ToolCalls, engine.ToolCall{ID: b.ID, Name: b.Name, Input: toolInput(b.Input)})
		}
	}
	resp.Text = text.String()
	return resp
}

// toolInput returns the model's tool input as valid JSON. Input cut short
// is passed on as a JSON string, so the engine's schema check tells the
// model what went wrong instead of an invalid RawMessage breaking the log.
func toolInput(in json.RawMessage) json.RawMessage {
	switch {
	case len(in) == 0:
		return json.RawMessage("{}")
	case json.Valid(in):
		return append(json.RawMessage(nil), in...)
	}
	b, _ := json.Marshal(string(in))
	return b
}

// historyInput returns a recorded tool input fit to send back: the API
// refuses a tool_use whose input is not an object, and an invalid
// RawMessage would fail the marshalling of the whole request.
func historyInput(in json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(in)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return json.RawMessage("{}")
	}
	return in
}
