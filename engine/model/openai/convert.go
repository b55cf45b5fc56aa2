package openai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"brain/engine"
)

// errorPrefix marks a failed tool result: Chat Completions has no is_error.
const errorPrefix = "ERROR: "

// params maps an engine request onto Chat Completions.
func (m *Model) params(req engine.ModelRequest) (openai.ChatCompletionNewParams, error) {
	if !m.completionTokens { // not OpenAI's own API: see withoutPDFs
		req.Messages = withoutPDFs(req.Messages)
	}
	msgs, err := messages(req.System, req.Messages)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{Model: m.model, Messages: msgs}
	maxTokens := m.maxTokens
	if req.MaxTokens > 0 {
		maxTokens = int64(req.MaxTokens)
	}
	if m.completionTokens {
		p.MaxCompletionTokens = param.NewOpt(maxTokens)
	} else {
		p.MaxTokens = param.NewOpt(maxTokens)
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: parameters(t.InputSchema)}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	return p, nil
}

// parameters keeps the tool's JSON Schema as sent: each top-level value
// stays raw JSON, so nothing below is reinterpreted.
func parameters(raw json.RawMessage) shared.FunctionParameters {
	var fields map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &fields) != nil || fields == nil {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	out := make(shared.FunctionParameters, len(fields))
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// messages maps the history: an assistant message carries its tool calls;
// each tool result becomes a "tool" message, and user text follows the
// tool results. Runs of one role are mapped together, since the tool
// messages must come right after the assistant message that made the calls:
// the assistants' merge into one message, the users' results go first.
func messages(system string, in []engine.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(in)+1)
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for i := 0; i < len(in); {
		j := i + 1
		for j < len(in) && in[j].Role == in[i].Role {
			j++
		}
		run := in[i:j]
		i = j
		switch run[0].Role {
		case engine.RoleAssistant:
			if a, ok := assistant(run); ok {
				out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: a})
			}
		case engine.RoleUser:
			for _, msg := range run {
				for _, r := range msg.ToolResults {
					content := r.Content
					if r.IsError {
						content = errorPrefix + content
					}
					out = append(out, openai.ToolMessage(content, r.CallID))
				}
			}
			for _, msg := range run {
				if msg.Text != "" {
					out = append(out, openai.UserMessage(msg.Text))
				}
				if m, ok := attachmentMessage(msg.Attachments); ok {
					out = append(out, m)
				}
			}
		default:
			return nil, &engine.ProviderError{
				Code:    engine.ProviderInvalidRequest,
				Message: "openai: unknown message role " + string(run[0].Role),
			}
		}
	}
	return out, nil
}

// assistant merges a run of assistant messages; ok is false when they
// carry nothing.
func assistant(run []engine.Message) (*openai.ChatCompletionAssistantMessageParam, bool) {
	a := &openai.ChatCompletionAssistantMessageParam{}
	var texts []string
	for _, msg := range run {
		if msg.Text != "" {
			texts = append(texts, msg.Text)
		}
		for _, c := range msg.ToolCalls {
			args := string(c.Input)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
				},
			})
		}
	}
	if len(texts) > 0 {
		a.Content.OfString = param.NewOpt(strings.Join(texts, "\n"))
	}
	return a, len(texts) > 0 || len(a.ToolCalls) > 0
}

// response maps the first choice. Stop reasons use the engine's (Anthropic)
// words: end_turn, tool_use, max_tokens, refusal.
func response(c *openai.ChatCompletion) engine.ModelResponse {
	choice := c.Choices[0]
	resp := engine.ModelResponse{
		Model:      c.Model,
		Text:       choice.Message.Content,
		StopReason: stopReason(choice.FinishReason),
		Usage:      usage(c.Usage),
	}
	if resp.Text == "" && choice.Message.Refusal != "" {
		resp.Text, resp.StopReason = choice.Message.Refusal, "refusal"
	}
	for _, tc := range choice.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered
		}
		resp.ToolCalls = append(resp.ToolCalls, engine.ToolCall{
			ID:    tc.ID,
			Name:  tc.Function.Name,
			Input: toolInput(tc.Function.Arguments),
		})
	}
	// Some servers (older Ollama) say "stop" even when they call tools.
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = "tool_use"
	}
	return resp
}

// toolInput returns arguments as JSON. Models do emit broken JSON; it is
// passed on as a JSON string so the engine's schema check tells the model
// what went wrong, instead of an invalid RawMessage breaking the event log.
func toolInput(args string) json.RawMessage {
	if args == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

func stopReason(finish string) string {
	switch finish {
	case "stop":
		return "end_turn"
	case "tool_calls", "function_call":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	}
	return finish
}
