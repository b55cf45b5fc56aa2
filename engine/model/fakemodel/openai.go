package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// openaiAPI speaks the OpenAI Chat Completions API.
type openaiAPI struct{}

func (openaiAPI) decode(raw []byte) (Request, error) {
	var body struct {
		Model    string          `json:"model"`
		Messages json.RawMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	req := Request{Provider: ProviderOpenAI}
	if err := json.Unmarshal(raw, &body); err != nil {
		return req, fmt.Errorf("decode openai request: %w", err)
	}
	req.Model, req.Messages, req.Stream = body.Model, body.Messages, body.Stream
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	var msgs []message
	if err := json.Unmarshal(body.Messages, &msgs); err != nil {
		return req, fmt.Errorf("decode openai messages: %w", err)
	}
	var system []string
	for _, m := range msgs {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, contentText(m.Content))
		}
	}
	req.System = strings.Join(system, "\n")
	return req, nil
}

func (openaiAPI) lastUserText(messages json.RawMessage) string {
	return lastUserText(messages)
}

// Wire shapes of the OpenAI answer.
type (
	oaiCompletion struct {
		ID      string      `json:"id"`
		Object  string      `json:"object"`
		Created int64       `json:"created"`
		Model   string      `json:"model"`
		Choices []oaiChoice `json:"choices"`
		Usage   *oaiUsage   `json:"usage,omitempty"`
	}
	oaiChoice struct {
		Index        int         `json:"index"`
		Message      *oaiMessage `json:"message,omitempty"`
		Delta        *oaiMessage `json:"delta,omitempty"`
		FinishReason *string     `json:"finish_reason"`
	}
	oaiMessage struct {
		Role      string        `json:"role,omitempty"`
		Content   *string       `json:"content,omitempty"`
		ToolCalls []oaiToolCall `json:"tool_calls,omitempty"`
	}
	oaiToolCall struct {
		Index    *int   `json:"index,omitempty"` // streaming only
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	oaiUsage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
)

func (openaiAPI) writeAnswer(w http.ResponseWriter, h *Handler, req Request, a answer) {
	id := "chatcmpl-fake-" + strconv.FormatUint(h.newID(), 10)
	calls := make([]oaiToolCall, len(a.calls))
	for i, c := range a.calls {
		if c.ID == "" {
			c.ID = "call_fake_" + strconv.FormatUint(h.newID(), 10)
		}
		if c.Input == "" {
			c.Input = "{}"
		}
		calls[i].ID, calls[i].Type = c.ID, "function"
		calls[i].Function.Name, calls[i].Function.Arguments = c.Name, c.Input
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	in, out := promptTokens(req), outputTokens(a)
	usage := &oaiUsage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
	_, usage.PromptTokensDetails.CachedTokens, _ = h.splitUsage(req)
	msg := oaiMessage{Role: "assistant", ToolCalls: calls}
	if a.text != "" || len(calls) == 0 {
		msg.Content = &a.text
	}
	if !req.Stream {
		b, _ := json.Marshal(oaiCompletion{
			ID: id, Object: "chat.completion", Model: req.Model,
			Choices: []oaiChoice{{Message: &msg, FinishReason: &finish}},
			Usage:   usage,
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}

	// Streaming: a role+text chunk, one chunk per tool call, a finish chunk,
	// a usage chunk (sent always; clients that did not ask ignore it), DONE.
	// Headers first: a slow answer writes its body in pieces.
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var buf bytes.Buffer
	chunk := func(delta oaiMessage, finish *string, usage *oaiUsage) {
		choices := []oaiChoice{{Delta: &delta, FinishReason: finish}}
		if usage != nil {
			choices = []oaiChoice{}
		}
		b, _ := json.Marshal(oaiCompletion{
			ID: id, Object: "chat.completion.chunk", Model: req.Model, Choices: choices, Usage: usage,
		})
		buf.WriteString("data: ")
		buf.Write(b)
		buf.WriteString("\n\n")
	}
	if a.pace == nil || msg.Content == nil {
		chunk(oaiMessage{Role: "assistant", Content: msg.Content}, nil, nil)
	} else {
		for n, part := range a.pace.pieces(*msg.Content) {
			delta := oaiMessage{Content: &part}
			if n == 0 {
				delta.Role = "assistant"
			}
			chunk(delta, nil, nil)
			if !a.pace.flushPiece(a.ctx, w, &buf, n, part) {
				return
			}
		}
	}
	for i := range calls {
		c := calls[i]
		c.Index = &i
		chunk(oaiMessage{ToolCalls: []oaiToolCall{c}}, nil, nil)
	}
	chunk(oaiMessage{}, &finish, nil)
	chunk(oaiMessage{}, nil, usage)
	buf.WriteString("data: [DONE]\n\n")
	w.Write(buf.Bytes())
}

func (openaiAPI) writeError(w http.ResponseWriter, status int, message string) {
	typ, code := "invalid_request_error", ""
	switch {
	case status == http.StatusUnauthorized:
		code = "invalid_api_key"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusNotFound:
		code = "model_not_found"
	case status == http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	e.Error.Message, e.Error.Type = message, typ
	if code != "" {
		e.Error.Code = &code
	}
	b, _ := json.Marshal(e)
	setErrorHeaders(w, status)
	w.WriteHeader(status)
	w.Write(b)
}

// writeMidStreamError has no OpenAI counterpart worth faking: it fails the
// request like Fail.
func (o openaiAPI) writeMidStreamError(w http.ResponseWriter, _ Request, status int, message string) {
	o.writeError(w, status, message)
}
