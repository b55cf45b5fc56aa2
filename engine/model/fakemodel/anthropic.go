package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// anthropicAPI speaks the Anthropic Messages API.
type anthropicAPI struct{}

func (anthropicAPI) decode(raw []byte) (Request, error) {
	var body struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages json.RawMessage `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	req := Request{Provider: ProviderAnthropic}
	if err := json.Unmarshal(raw, &body); err != nil {
		return req, fmt.Errorf("decode anthropic request: %w", err)
	}
	req.Model, req.Messages, req.Stream = body.Model, body.Messages, body.Stream
	req.System = contentText(body.System)
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	return req, nil
}

func (anthropicAPI) lastUserText(messages json.RawMessage) string {
	return lastUserText(messages)
}

// Wire shapes of the Anthropic answer, shared by the JSON and SSE forms.
type (
	anthMessage struct {
		ID           string      `json:"id"`
		Type         string      `json:"type"`
		Role         string      `json:"role"`
		Model        string      `json:"model"`
		Content      []anthBlock `json:"content"`
		StopReason   *string     `json:"stop_reason"`
		StopSequence *string     `json:"stop_sequence"`
		Usage        anthUsage   `json:"usage"`
	}
	anthBlock struct {
		Type  string           `json:"type"`
		Text  *string          `json:"text,omitempty"`
		ID    string           `json:"id,omitempty"`
		Name  string           `json:"name,omitempty"`
		Input *json.RawMessage `json:"input,omitempty"`
	}
	anthUsage struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	}
	anthStop struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
	anthOutUsage struct {
		OutputTokens int `json:"output_tokens"`
	}
	anthDelta struct {
		Type        string `json:"type"`
		Text        string `json:"text,omitempty"`
		PartialJSON string `json:"partial_json,omitempty"`
	}
)

func (anthropicAPI) writeAnswer(w http.ResponseWriter, h *Handler, req Request, a answer) {
	id := h.newID()
	blocks := make([]anthBlock, 0, len(a.calls)+1)
	if a.text != "" || len(a.calls) == 0 {
		blocks = append(blocks, anthBlock{Type: "text", Text: &a.text})
	}
	for _, c := range a.calls {
		if c.ID == "" {
			c.ID = "toolu_fake_" + strconv.FormatUint(h.newID(), 10)
		}
		input := json.RawMessage(c.Input)
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		blocks = append(blocks, anthBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: &input})
	}
	stop := "end_turn"
	if len(a.calls) > 0 {
		stop = "tool_use"
	}
	uncached, read, written := h.splitUsage(req)
	usage := anthUsage{InputTokens: uncached, CacheCreationInputTokens: written, CacheReadInputTokens: read, OutputTokens: outputTokens(a)}
	msg := anthMessage{
		ID: "msg_fake_" + strconv.FormatUint(id, 10), Type: "message", Role: "assistant",
		Model: req.Model, Content: blocks, StopReason: &stop, Usage: usage,
	}
	if !req.Stream {
		b, err := json.Marshal(msg)
		if err != nil { // a Call.Input that is not JSON cannot go in a JSON answer
			anthropicAPI{}.writeError(w, http.StatusInternalServerError, "fake model server (test double): "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}

	// Headers first: a slow answer writes its body in pieces.
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var buf bytes.Buffer
	start := msg
	start.Content, start.StopReason = []anthBlock{}, nil
	start.Usage.OutputTokens = 1
	writeSSE(&buf, "message_start", struct {
		Type    string      `json:"type"`
		Message anthMessage `json:"message"`
	}{"message_start", start})
	for i, b := range blocks {
		// The block starts empty and its content arrives in two deltas, so
		// clients are exercised on accumulation.
		first, second, text := "", "", ""
		var delta string
		switch b.Type {
		case "text":
			text = *b.Text
			first, second = split(text)
			b.Text, delta = new(string), "text_delta"
		case "tool_use":
			first, second = split(string(*b.Input))
			empty := json.RawMessage("{}")
			b.Input, delta = &empty, "input_json_delta"
		}
		writeSSE(&buf, "content_block_start", struct {
			Type         string    `json:"type"`
			Index        int       `json:"index"`
			ContentBlock anthBlock `json:"content_block"`
		}{"content_block_start", i, b})
		parts := []string{first, second}
		if delta == "text_delta" {
			parts = a.pace.pieces(text)
		}
		for n, part := range parts {
			if part == "" {
				continue
			}
			d := anthDelta{Type: delta, Text: part}
			if delta == "input_json_delta" {
				d = anthDelta{Type: delta, PartialJSON: part}
			}
			writeSSE(&buf, "content_block_delta", struct {
				Type  string    `json:"type"`
				Index int       `json:"index"`
				Delta anthDelta `json:"delta"`
			}{"content_block_delta", i, d})
			if delta == "text_delta" && !a.pace.flushPiece(a.ctx, w, &buf, n, part) {
				return
			}
		}
		writeSSE(&buf, "content_block_stop", struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		}{"content_block_stop", i})
	}
	writeSSE(&buf, "message_delta", struct {
		Type  string       `json:"type"`
		Delta anthStop     `json:"delta"`
		Usage anthOutUsage `json:"usage"`
	}{"message_delta", anthStop{StopReason: stop}, anthOutUsage{usage.OutputTokens}})
	writeSSE(&buf, "message_stop", struct {
		Type string `json:"type"`
	}{"message_stop"})
	w.Write(buf.Bytes())
}

// anthropicErrorType is the error.type Anthropic sends with status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

type anthError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func newAnthError(status int, message string) anthError {
	var e anthError
	e.Type, e.Error.Type, e.Error.Message = "error", anthropicErrorType(status), message
	return e
}

func (anthropicAPI) writeError(w http.ResponseWriter, status int, message string) {
	b, _ := json.Marshal(newAnthError(status, message))
	setErrorHeaders(w, status)
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	w.Write(b)
}

func (a anthropicAPI) writeMidStreamError(w http.ResponseWriter, req Request, status int, message string) {
	if !req.Stream {
		a.writeError(w, status, message)
		return
	}
	var buf bytes.Buffer
	writeSSE(&buf, "message_start", struct {
		Type    string      `json:"type"`
		Message anthMessage `json:"message"`
	}{"message_start", anthMessage{
		ID: "msg_fake_err", Type: "message", Role: "assistant", Model: req.Model, Content: []anthBlock{},
	}})
	writeSSE(&buf, "error", newAnthError(status, message))
	w.Header().Set("Content-Type", "text/event-stream")
	w.Write(buf.Bytes())
}

// writeSSE appends one server-sent event. The values are built by this
// package, so marshalling cannot fail short of a bug.
func writeSSE(buf *bytes.Buffer, event string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fake model server (test double): marshal %s: %v", event, err))
	}
	buf.WriteString("event: ")
	buf.WriteString(event)
	buf.WriteString("\ndata: ")
	buf.Write(data)
	buf.WriteString("\n\n")
}

// split cuts s in two halves on a rune boundary.
func split(s string) (string, string) {
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], s[i:]
}

func outputTokens(a answer) int {
	n := len(a.text)
	for _, c := range a.calls {
		n += len(c.Name) + len(c.Input)
	}
	return n/4 + 1
}
