package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/model/modeltest"
)

// toolResultWire: the call goes back with its arguments as a JSON string,
// and the result as a "tool" message.
func toolResultWire(call engine.ToolCall) string {
	args, _ := json.Marshal(modeltest.ToolInput)
	return `{"messages":[
		{"role":"user","content":"weather?"},
		{"role":"assistant","content":"Checking.","tool_calls":[
			{"id":"` + call.ID + `","type":"function","function":{"name":"weather","arguments":` + string(args) + `}}]},
		{"role":"tool","tool_call_id":"` + call.ID + `","content":"{\"sky\":\"clear\"}"}
	]}`
}

// historyWire is modeltest.HistoryRequest for Chat Completions: the tool
// messages follow the assistant message that made the calls, before the
// user text typed meanwhile; a failed result is marked in its content (there
// is no is_error); assistant runs merge into one message; arguments are
// sent as recorded ("{}" when there were none).
const historyWire = `{"messages":[
	{"role":"system","content":"sys"},
	{"role":"user","content":"weather and time?"},
	{"role":"assistant","content":"Let me check.","tool_calls":[
		{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
		{"id":"c2","type":"function","function":{"name":"time","arguments":"{}"}},
		{"id":"c3","type":"function","function":{"name":"broken","arguments":"\"oops\""}}]},
	{"role":"tool","tool_call_id":"c1","content":"sunny"},
	{"role":"tool","tool_call_id":"c2","content":"ERROR: clock broke"},
	{"role":"tool","tool_call_id":"c3","content":"ERROR: "},
	{"role":"user","content":"hurry"},
	{"role":"user","content":"thanks"},
	{"role":"assistant","content":"Sunny;\ntime unknown."},
	{"role":"user","content":"ok"}
]}`

// suite describes the adapter to the shared conformance tests. The tests
// after TestOpenAI_Conformance are the ones only Chat Completions has.
func suite() modeltest.Suite {
	return modeltest.Suite{
		New:              newModel,
		BasePath:         "/v1/",
		Provider:         fakemodel.ProviderOpenAI,
		CallIDPrefix:     "call_",
		DefaultMaxTokens: DefaultMaxTokens,
		Wire: modeltest.Wire{
			// Not streamed; the system prompt is the first message. Not
			// OpenAI's own host: the widely supported max_tokens is sent
			// (the suite checks it), max_completion_tokens is not.
			Text: `{"stream":null,"max_completion_tokens":null,"messages":[
				{"role":"system","content":"You are terse."},
				{"role":"user","content":"hi"}]}`,
			Tools:      `{"tools":[{"type":"function","function":{"name":"weather","description":"Forecast","parameters":` + modeltest.ToolSchema + `}}]}`,
			ToolResult: toolResultWire,
			History:    historyWire,
		},
		Env: map[string]string{
			"OPENAI_API_KEY":        "bogus-env-key",
			"OPENAI_BASE_URL":       "http://127.0.0.1:1/v1/",
			"OPENAI_ORG_ID":         "bogus-org",
			"OPENAI_PROJECT_ID":     "bogus-project",
			"OPENAI_CUSTOM_HEADERS": "X-Bogus: 1",
		},
		LeakHeaders: []string{"X-Bogus", "OpenAI-Organization", "OpenAI-Project"},
	}
}

// newModel maps the suite's settings onto Config.
func newModel(c modeltest.Config) (engine.Model, error) {
	return New(Config{BaseURL: c.BaseURL, APIKey: c.APIKey, KeyHint: c.KeyHint, Model: c.Model,
		MaxTokens: c.MaxTokens, MaxRetries: c.MaxRetries, Timeout: c.Timeout})
}

func TestOpenAI_Conformance(t *testing.T) { modeltest.Run(t, suite()) }

func TestOpenAI_OpenAIHostUsesMaxCompletionTokens(t *testing.T) {
	// Reasoning models on api.openai.com refuse max_tokens. The request is
	// caught by a transport so nothing leaves the machine.
	var body []byte
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host != "api.openai.com" {
			t.Errorf("request to %s", r.URL)
		}
		body, _ = readAll(r)
		rec := httptest.NewRecorder()
		rec.WriteHeader(http.StatusUnauthorized)
		rec.WriteString(`{"error":{"message":"no","type":"invalid_request_error"}}`)
		return rec.Result(), nil
	})
	m, err := New(Config{APIKey: modeltest.TestKey, Model: "o3", HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), modeltest.UserText("hi"))
	modeltest.ProviderError(t, err, engine.ProviderAuth, false)
	var sent map[string]any
	json.Unmarshal(body, &sent)
	if sent["max_completion_tokens"] != float64(DefaultMaxTokens) || sent["max_tokens"] != nil {
		t.Fatalf("unexpected token cap in %s", body)
	}
}

func TestOpenAI_InvalidToolArguments(t *testing.T) {
	// Broken JSON from the model reaches the engine as a JSON string, so the
	// engine's schema check can tell the model.
	srv := modeltest.NewServer(t)
	srv.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "call_x", Name: "t", Input: `{"a":`}))
	m, err := New(Config{BaseURL: srv.OpenAIBaseURL(), APIKey: modeltest.TestKey, Model: "llama-test"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(t.Context(), modeltest.UserText("x"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	modeltest.AssertJSON(t, resp.ToolCalls[0].Input, `"{\"a\":"`)
}

func TestOpenAI_NonStandardErrorBody(t *testing.T) {
	// Some compatible servers answer {"error":"text"}; the status still
	// decides.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"unauthorized"}`))
	}))
	defer srv.Close()
	m, err := New(Config{BaseURL: srv.URL + "/v1/", APIKey: modeltest.TestKey, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), modeltest.UserText("hi"))
	modeltest.ProviderError(t, err, engine.ProviderAuth, false)
}

func TestOpenAI_WrongBaseURL(t *testing.T) {
	// A base URL that reaches a web page answers 200 with HTML.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html>hello</html>`))
	}))
	defer srv.Close()
	m, err := New(Config{BaseURL: srv.URL, APIKey: modeltest.TestKey, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), modeltest.UserText("hi"))
	pe := modeltest.ProviderError(t, err, engine.ProviderUnavailable, true)
	if !strings.Contains(pe.Message, "base_url") {
		t.Fatalf("message %q does not hint at base_url", pe.Message)
	}
}

func TestNew_BaseURLWithoutScheme(t *testing.T) {
	// The other invalid settings are the suite's InvalidConfig.
	if _, err := New(Config{Model: "m", BaseURL: "127.0.0.1:11434/v1"}); err == nil {
		t.Error("New accepted a base URL without a scheme")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func readAll(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	return io.ReadAll(r.Body)
}
