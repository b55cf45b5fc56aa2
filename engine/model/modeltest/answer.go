package modeltest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// ToolInput is the input of the call the model makes in ToolRoundTrip:
// nested, so that it must come through verbatim.
const ToolInput = `{"city":"Paris","days":[1,2],"opts":{"metric":true}}`

// ToolSchema is the input schema of the tool ToolRoundTrip offers. Its
// additionalProperties and $defs are there to be dropped by an adapter that
// decodes the schema instead of sending it verbatim.
const ToolSchema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false,"$defs":{"x":{"type":"string"}}}`

// HistoryRequest is the conversation HistoryMapping sends, with the edges
// of history mapping: a call without input and one whose recorded input is
// not an object, failed results (one empty), steering typed while the
// tools ran (so two user messages, the text first, follow the calls), an
// answer recorded in two assistant messages around an empty one.
func HistoryRequest() engine.ModelRequest {
	return engine.ModelRequest{
		System:    "sys",
		MaxTokens: 77,
		Messages: []engine.Message{
			{Role: engine.RoleUser, Text: "weather and time?"},
			{Role: engine.RoleAssistant, Text: "Let me check.", ToolCalls: []engine.ToolCall{
				{ID: "c1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "c2", Name: "time"},                                     // no input
				{ID: "c3", Name: "broken", Input: json.RawMessage(`"oops"`)}, // not an object
			}},
			{Role: engine.RoleUser, Text: "hurry"},
			{Role: engine.RoleUser, ToolResults: []engine.ToolResult{
				{CallID: "c1", Content: "sunny"},
				{CallID: "c2", Content: "clock broke", IsError: true},
				{CallID: "c3", Content: "", IsError: true},
			}, Text: "thanks"},
			{Role: engine.RoleAssistant, Text: "Sunny;"},
			{Role: engine.RoleAssistant, Text: ""},
			{Role: engine.RoleAssistant, Text: "time unknown."},
			{Role: engine.RoleUser, Text: "ok"},
		},
	}
}

// textAnswer: a text answer and its usage are mapped; the request carries
// the model, the system prompt and the default answer cap.
func (s Suite) textAnswer(t *testing.T) {
	srv := NewServer(t)
	srv.Push(fakemodel.Text("Hello there, ünïcode included."))
	m := s.model(t, srv, nil)

	req := UserText("hi")
	req.System = "You are terse."
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "Hello there, ünïcode included." || resp.StopReason != "end_turn" || len(resp.ToolCalls) != 0 {
		t.Fatalf("unexpected response %+v", resp)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Fatalf("usage not mapped: %+v", resp.Usage)
	}
	if resp.Model != testModel {
		t.Fatalf("model %q, want the one that answered, %q", resp.Model, testModel)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Provider != s.Provider || r.Model != testModel || r.System != "You are terse." {
		t.Fatalf("unexpected request %+v", r)
	}
	if got := maxTokens(t, r.Raw, s.MaxTokensKey); got != s.DefaultMaxTokens {
		t.Fatalf("%s %d, want %d", s.MaxTokensKey, got, s.DefaultMaxTokens)
	}
	assertBody(t, r.Raw, s.Wire.Text)
}

// toolRoundTrip: a tool call comes back with its input verbatim, the tool
// went out with its schema verbatim, and the call and its result go back
// on the next request.
func (s Suite) toolRoundTrip(t *testing.T) {
	srv := NewServer(t)
	srv.Push(
		fakemodel.TextAndTools("Checking.", fakemodel.Call{Name: "weather", Input: ToolInput}),
		fakemodel.Text("Sunny."),
	)
	m := s.model(t, srv, nil)
	req := UserText("weather?")
	req.Tools = []engine.ToolSpec{{Name: "weather", Description: "Forecast", InputSchema: json.RawMessage(ToolSchema)}}

	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "Checking." || resp.StopReason != "tool_use" || len(resp.ToolCalls) != 1 {
		t.Fatalf("unexpected response %+v", resp)
	}
	call := resp.ToolCalls[0]
	if call.Name != "weather" || !strings.HasPrefix(call.ID, s.CallIDPrefix) {
		t.Fatalf("unexpected call %+v", call)
	}
	AssertJSON(t, call.Input, ToolInput)
	first := srv.Requests()[0]
	if !slices.Equal(first.Tools, []string{"weather"}) {
		t.Fatalf("offered tools %q, want [weather]", first.Tools)
	}
	assertBody(t, first.Raw, s.Wire.Tools)

	req.Messages = append(req.Messages,
		engine.Message{Role: engine.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls},
		engine.Message{Role: engine.RoleUser, ToolResults: []engine.ToolResult{{CallID: call.ID, Name: "weather", Content: `{"sky":"clear"}`}}},
	)
	resp, err = m.Generate(t.Context(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "Sunny." {
		t.Fatalf("unexpected response %+v", resp)
	}
	assertBody(t, srv.Requests()[1].Raw, s.Wire.ToolResult(call))
}

// historyMapping: HistoryRequest is sent as Wire.History, with the
// request's own answer cap.
func (s Suite) historyMapping(t *testing.T) {
	srv := NewServer(t)
	m := s.model(t, srv, nil)
	if _, err := m.Generate(t.Context(), HistoryRequest()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r := srv.Requests()[0]
	if r.System != "sys" {
		t.Fatalf("system %q, want sys", r.System)
	}
	if got := maxTokens(t, r.Raw, s.MaxTokensKey); got != 77 {
		t.Fatalf("%s %d, want 77", s.MaxTokensKey, got)
	}
	assertBody(t, r.Raw, s.Wire.History)
}
