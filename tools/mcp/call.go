package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"brain/tools"
)

// maxErrorText caps the server's own text quoted in an error.
const maxErrorText = 8000

// callTool runs tools/call on the server connected now and counts it.
func (s *server) callTool(ctx context.Context, name, mcpName string, call tools.Call) (json.RawMessage, error) {
	out, err := s.sendCall(ctx, name, mcpName, call)
	s.stats.calls.Add(1)
	var ir *tools.InputRequired
	if err != nil && !errors.As(err, &ir) {
		s.stats.errors.Add(1)
	}
	return out, err
}

func (s *server) sendCall(ctx context.Context, name, mcpName string, call tools.Call) (json.RawMessage, error) {
	args := bytes.TrimSpace(call.Input)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, tools.Failed("%s: arguments must be a JSON object; nothing was sent", name)
	}
	c, err := s.connFor(ctx, name, call)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, tools.Failed("%s: %s before the call was sent; nothing was sent", name, ctxReason(ctx))
	}
	params := map[string]any{"name": mcpName, "arguments": json.RawMessage(args)}
	if call.Resume != nil {
		if err := resumeParams(params, call.Resume); err != nil {
			return nil, tools.Failed("%s: %v; nothing was sent", name, err)
		}
	}
	// A 2025-11-25 server's elicitation/create during the call reaches
	// the person through the call (see elicitor).
	ctx = context.WithValue(ctx, callKey{}, call)
	defer c.calls.add(call)()
	if call.Progress != nil {
		token := c.nextID("brain-progress")
		notes := make(chan progressNote, 16)
		c.progress.Store(token, notes)
		defer c.progress.Delete(token)
		params["_meta"] = map[string]any{"progressToken": token}
		stop := forward(ctx, call, notes)
		defer stop()
	}
	if h, ok := s.headers.Load(mcpName); ok {
		ctx = withParams(ctx, mirror(h.(map[string]string), args))
	}
	raw, err := c.request(ctx, "tools/call", params)
	if err != nil {
		if cr := s.refusedPerson(ctx, name, call, err); cr != nil {
			return nil, cr
		}
		return nil, s.callError(ctx, name, err)
	}
	var res struct {
		Content           []json.RawMessage          `json:"content"`
		StructuredContent json.RawMessage            `json:"structuredContent"`
		IsError           bool                       `json:"isError"`
		ResultType        string                     `json:"resultType"`
		InputRequests     map[string]json.RawMessage `json:"inputRequests"`
		RequestState      json.RawMessage            `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, tools.Unknown("%s: the server answered with an invalid result; the tool may have run", name)
	}
	if res.ResultType == "input_required" {
		return nil, s.inputRequired(name, res.InputRequests, res.RequestState)
	}
	text := s.scrub.String(describe(res.Content))
	if res.IsError {
		if text == "" {
			text = "no details given"
		}
		return nil, &tools.Error{Message: fmt.Sprintf("%s: the tool reported an error: %s", name, clip(text, maxErrorText))}
	}
	out := map[string]any{"content": text}
	if sc := bytes.TrimSpace(res.StructuredContent); len(sc) > 0 && string(sc) != "null" {
		// Unchanged (key order and numbers as sent) unless it holds a secret.
		out["structuredContent"] = json.RawMessage(s.scrub.JSON(sc))
	}
	return marshal(out)
}

// forward passes the server's progress notifications to the call until
// stop is called; stop waits for it to end.
func forward(ctx context.Context, call tools.Call, notes <-chan progressNote) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				// Notes that came before the result still count.
				for {
					select {
					case n := <-notes:
						_ = call.ReportProgress(ctx, n)
					default:
						return
					}
				}
			case n := <-notes:
				_ = call.ReportProgress(ctx, n)
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// callError turns a failed request into the tool error the model sees.
// An answer from the server (a JSON-RPC error, a refusal) is a known
// failure; no answer is unknown unless the request certainly never left.
func (s *server) callError(ctx context.Context, name string, err error) error {
	var re *rpcError
	if errors.As(err, &re) {
		msg := clip(s.scrub.String(re.Message), maxErrorText)
		return &tools.Error{Message: fmt.Sprintf("%s: the server answered with an error: %s (code %d)", name, msg, re.Code)}
	}
	reason := s.reason(ctx, err)
	var se *sendError
	if errors.As(err, &se) {
		switch {
		case !se.sent:
			return tools.Failed("%s: %s; nothing was sent", name, reason)
		case se.refused:
			return tools.Failed("%s: the server refused the request: %s", name, reason)
		}
	}
	return tools.Unknown("%s: %s; the server may have acted on it", name, reason)
}

// reason says why a request got no answer, with secrets scrubbed.
func (s *server) reason(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return ctxReason(ctx) + " waiting for the server"
	}
	return s.scrub.String(err.Error())
}

func ctxReason(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "timed out"
	}
	return "cancelled"
}

// describe joins a result's content as text; content that is not text is
// described in a few words.
func describe(content []json.RawMessage) string {
	parts := make([]string, 0, len(content))
	for _, raw := range content {
		var c struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MIMEType string `json:"mimeType"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Resource *struct {
				URI      string  `json:"uri"`
				MIMEType string  `json:"mimeType"`
				Text     *string `json:"text"`
			} `json:"resource"`
		}
		if json.Unmarshal(raw, &c) != nil {
			continue
		}
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "image", "audio":
			parts = append(parts, fmt.Sprintf("[%s: %s]", c.Type, orUnknown(c.MIMEType)))
		case "resource_link":
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", c.Name, c.URI))
		case "resource":
			switch {
			case c.Resource == nil:
				parts = append(parts, "[resource]")
			case c.Resource.Text != nil:
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, *c.Resource.Text))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s: binary %s]", c.Resource.URI, orUnknown(c.Resource.MIMEType)))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%s content]", orUnknown(c.Type)))
		}
	}
	return strings.Join(parts, "\n")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

func marshal(v any) (json.RawMessage, error) {
	b, err := tools.MarshalUnescaped(v)
	if err != nil {
		return nil, tools.Unknown("encode the result: %v", err)
	}
	return b, nil
}

// clip cuts s to at most n characters, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
