package anthropic

import (
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/model/modeltest"
)

// toolResultWire: the tool_use block goes back with its input, and the
// result as a tool_result block in the next user message.
func toolResultWire(call engine.ToolCall) string {
	return `{"messages":[
		{"role":"user","content":[{"type":"text","text":"weather?"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Checking."},
			{"type":"tool_use","id":"` + call.ID + `","name":"weather","input":` + modeltest.ToolInput + `,"cache_control":{"type":"ephemeral"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"` + call.ID + `","content":[{"type":"text","text":"{\"sky\":\"clear\"}"}],"cache_control":{"type":"ephemeral"}}]}
	]}`
}

// historyWire is modeltest.HistoryRequest for Anthropic: roles alternate, so
// runs of one role merge into one message; tool_result blocks come first in
// a user message; a tool_use input is always an object; empty text blocks
// (refused by the API) are left out, even inside a tool_result. Cache
// breakpoints mark the system prompt and the last block of the last two
// messages (see cache.go).
const historyWire = `{
	"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],
	"messages":[
		{"role":"user","content":[{"type":"text","text":"weather and time?"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Let me check."},
			{"type":"tool_use","id":"c1","name":"weather","input":{"city":"Paris"}},
			{"type":"tool_use","id":"c2","name":"time","input":{}},
			{"type":"tool_use","id":"c3","name":"broken","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"sunny"}]},
			{"type":"tool_result","tool_use_id":"c2","is_error":true,"content":[{"type":"text","text":"clock broke"}]},
			{"type":"tool_result","tool_use_id":"c3","is_error":true},
			{"type":"text","text":"hurry"},
			{"type":"text","text":"thanks"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Sunny;"},
			{"type":"text","text":"time unknown.","cache_control":{"type":"ephemeral"}}]},
		{"role":"user","content":[{"type":"text","text":"ok","cache_control":{"type":"ephemeral"}}]}
	]}`

// suite describes the adapter to the shared conformance tests. The tests
// after TestAnthropic_Conformance are the ones only Anthropic has.
func suite() modeltest.Suite {
	return modeltest.Suite{
		New:              newModel,
		Provider:         fakemodel.ProviderAnthropic,
		CallIDPrefix:     "toolu_",
		DefaultMaxTokens: DefaultMaxTokens,
		Wire: modeltest.Wire{
			// The adapter always streams; the system prompt is a text block,
			// a cache breakpoint on it and on the last tool.
			Text:       `{"stream":true,"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}]}`,
			Tools:      `{"tools":[{"name":"weather","description":"Forecast","input_schema":` + modeltest.ToolSchema + `,"cache_control":{"type":"ephemeral"}}]}`,
			ToolResult: toolResultWire,
			History:    historyWire,
		},
		Env: map[string]string{
			"ANTHROPIC_API_KEY":        "bogus-env-key",
			"ANTHROPIC_AUTH_TOKEN":     "bogus-env-token",
			"ANTHROPIC_BASE_URL":       "http://127.0.0.1:1",
			"ANTHROPIC_CUSTOM_HEADERS": "X-Bogus: 1",
			"ANTHROPIC_PROFILE":        "bogus-profile",
		},
		LeakHeaders: []string{"X-Bogus"},
		Errors: []modeltest.ErrorCase{
			// Anthropic reports overload as an error event inside a stream
			// that began with HTTP 200.
			{Name: "overloaded mid-stream", Steps: []fakemodel.Step{fakemodel.FailMidStream(529, "Overloaded")},
				Code: engine.ProviderUnavailable, Transient: true, Status: 529, Requests: 1},
		},
	}
}

// newModel maps the suite's settings onto Config.
func newModel(c modeltest.Config) (engine.Model, error) {
	return New(Config{BaseURL: c.BaseURL, APIKey: c.APIKey, KeyHint: c.KeyHint, Model: c.Model,
		MaxTokens: c.MaxTokens, MaxRetries: c.MaxRetries, Timeout: c.Timeout})
}

func TestAnthropic_Conformance(t *testing.T) { modeltest.Run(t, suite()) }

func TestAnthropic_NonStreamingFakeAnswer(t *testing.T) {
	// The fake also answers non-streaming requests; the adapter always
	// streams, so this checks the fake alone against the SDK's decoder.
	srv := modeltest.NewServer(t)
	srv.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_1", Name: "t", Input: `{"a":1}`}))
	m, err := New(Config{BaseURL: srv.URL(), APIKey: modeltest.TestKey, Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	params, err := m.params(modeltest.UserText("x"))
	if err != nil {
		t.Fatalf("params: %v", err)
	}
	msg, err := m.client.Messages.New(t.Context(), params)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	resp := response(*msg)
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "toolu_1" || resp.StopReason != "tool_use" {
		t.Fatalf("unexpected response %+v", resp)
	}
	modeltest.AssertJSON(t, resp.ToolCalls[0].Input, `{"a":1}`)
	if srv.Requests()[0].Stream {
		t.Fatal("request recorded as streaming")
	}
}
