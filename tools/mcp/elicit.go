package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"brain/tools"
)

// capabilities is what brain declares to every server: elicitation in
// form and URL mode (a person answers through the session's question).
func capabilities() mcp.ClientCapabilities {
	return mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}}
}

// callKey carries the tools.Call a request was sent for, so a server's
// elicitation/create that arrives on that request's stream reaches the
// person of that call.
type callKey struct{}

// inflight is the calls a connection has sent and not yet seen answered,
// for elicitations that arrive apart from their call's stream (stdio).
type inflight struct {
	mu    sync.Mutex
	next  int
	calls map[int]tools.Call
}

func (f *inflight) add(call tools.Call) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[int]tools.Call{}
	}
	f.next++
	id := f.next
	f.calls[id] = call
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.calls, id)
	}
}

// only returns the one call in flight, when there is exactly one: with
// several, an elicitation cannot be told apart and is declined.
func (f *inflight) only() (tools.Call, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 1 {
		return tools.Call{}, false
	}
	for _, c := range f.calls {
		return c, true
	}
	return tools.Call{}, false
}

// elicitor answers a 2025-11-25 server's elicitation/create through the
// call it arrived for.
type elicitor struct{ c *conn }

func (h elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s := h.c.s
	s.stats.elicitations.Add(1)
	call, ok := ctx.Value(callKey{}).(tools.Call)
	if !ok {
		call, ok = h.c.calls.only()
	}
	el, err := elicitationOf(req.Params)
	var reply tools.Reply
	switch {
	case err != nil:
		reply = declined(fmt.Sprintf("brain cannot show this request: %v", err))
	case !ok:
		reply = declined("brain could not tell which tool call the request belongs to")
	case call.Elicit == nil:
		reply = declined("nobody can answer during this call")
	default:
		if reply, err = call.Elicit(ctx, el); err != nil {
			return nil, err
		}
	}
	s.log.Info("mcp elicitation answered", tools.LogElicit, reply.Action)
	return &mcp.ElicitationResult{ElicitationResponse: response(el, reply)}, nil
}

func declined(reason string) tools.Reply {
	return tools.Reply{Action: tools.ActionDecline, Reason: reason}
}

// response is the elicitation result the server gets: an accepted form
// has every field the person left out that has a default set to it
// (SEP-1034); a decline brain made itself carries its reason in _meta.
func response(el tools.Elicitation, r tools.Reply) mcp.ElicitationResponse {
	out := mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(r.Action)}
	if r.Action == tools.ActionAccept && el.URL == "" {
		out.Content = withDefaults(el.Fields, r.Content)
	}
	return out
}

// wireReply is the JSON of a reply in a multi round-trip request's
// inputResponses.
func wireReply(el tools.Elicitation, r tools.Reply) map[string]any {
	out := map[string]any{"action": r.Action}
	if resp := response(el, r); resp.Content != nil {
		out["content"] = resp.Content
	}
	if r.Reason != "" {
		out["_meta"] = map[string]any{"brain/reason": r.Reason}
	}
	return out
}

func withDefaults(fields []tools.Field, content map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range content {
		out[k] = v
	}
	for _, f := range fields {
		if _, set := out[f.Name]; !set && f.Default != nil {
			out[f.Name] = f.Default
		}
	}
	return out
}

// elicitationOf reads an elicitation/create request into the tools
// contract's form: URL mode, or a flat object of primitive fields (the
// only schema the protocol allows).
func elicitationOf(p mcp.ElicitationParams) (tools.Elicitation, error) {
	el := tools.Elicitation{Message: p.Message}
	if p.Mode == mcp.ElicitationModeURL {
		if p.URL == "" {
			return el, errors.New("url mode without a url")
		}
		el.URL = p.URL
		return el, nil
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return el, fmt.Errorf("requested schema: %w", err)
	}
	var schema struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
			EnumNames   []string `json:"enumNames"`
			OneOf       []struct {
				Const string `json:"const"`
				Title string `json:"title"`
			} `json:"oneOf"`
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return el, fmt.Errorf("requested schema: %w", err)
	}
	required := map[string]bool{}
	for _, r := range schema.Required {
		required[r] = true
	}
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	// Required fields first, then by name: the order a person reads.
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		p := schema.Properties[name]
		f := tools.Field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Default: p.Default, Required: required[name]}
		switch p.Type {
		case "string", "number", "integer", "boolean":
		default:
			return el, fmt.Errorf("field %q has type %q; only string, number, integer and boolean fields can be asked", name, p.Type)
		}
		for i, v := range p.Enum {
			c := tools.Choice{Value: v}
			if i < len(p.EnumNames) {
				c.Label = p.EnumNames[i]
			}
			f.Choices = append(f.Choices, c)
		}
		for _, o := range p.OneOf {
			f.Choices = append(f.Choices, tools.Choice{Value: o.Const, Label: o.Title})
		}
		el.Fields = append(el.Fields, f)
	}
	return el, nil
}

// roundTrip is what brain keeps between a 2026-07-28 server's
// input_required result and the call sent again with the answer: which
// input request the person answers, the others (declined), and the
// server's request state, echoed back byte for byte (absent when the
// server sent none).
type roundTrip struct {
	Key          string            `json:"key"`
	Elicitation  tools.Elicitation `json:"elicitation"`
	Others       []string          `json:"others,omitempty"`
	RequestState json.RawMessage   `json:"request_state,omitempty"`
}

// inputRequired turns a multi round-trip request's input_required result
// into the tools contract's InputRequired: the first elicitation is
// asked; any other input request is declined when the call is sent again.
func (s *server) inputRequired(name string, requests map[string]json.RawMessage, state json.RawMessage) error {
	keys := make([]string, 0, len(requests))
	for k := range requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rt := roundTrip{RequestState: state}
	for _, k := range keys {
		var req struct {
			Method string                `json:"method"`
			Params mcp.ElicitationParams `json:"params"`
		}
		err := json.Unmarshal(requests[k], &req)
		if err != nil || req.Method != string(mcp.MethodElicitationCreate) || rt.Key != "" {
			rt.Others = append(rt.Others, k)
			continue
		}
		el, err := elicitationOf(req.Params)
		if err != nil {
			return tools.Failed("%s: the server asked for input brain cannot show (%v); the call did not complete", name, err)
		}
		rt.Key, rt.Elicitation = k, el
	}
	if rt.Key == "" {
		return tools.Failed("%s: the server asked for input other than a person's (%v); the call did not complete", name, keys)
	}
	s.stats.elicitations.Add(1)
	raw, err := json.Marshal(rt)
	if err != nil {
		return tools.Failed("%s: encode the request state: %v", name, err)
	}
	return &tools.InputRequired{Elicitation: rt.Elicitation, State: raw}
}

// resumeParams adds the answer of a call sent again (Call.Resume) to the
// tools/call params: inputResponses, and requestState when the server
// gave one.
func resumeParams(params map[string]any, r *tools.Resume) error {
	var rt roundTrip
	if err := json.Unmarshal(r.State, &rt); err != nil || rt.Key == "" {
		return errors.New("the stored request state is unreadable")
	}
	responses := map[string]any{rt.Key: wireReply(rt.Elicitation, r.Reply)}
	for _, k := range rt.Others {
		responses[k] = wireReply(tools.Elicitation{}, declined("brain asks one question at a time"))
	}
	params["inputResponses"] = responses
	if len(rt.RequestState) > 0 {
		params["requestState"] = rt.RequestState
	}
	return nil
}
