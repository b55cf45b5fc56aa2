package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

const testKey = "test-key"

// newModel returns a Model pointed at srv with no retries; edit adjusts
// the config.
func newModel(t *testing.T, srv *fakemodel.Server, edit func(*Config)) *Model {
	t.Helper()
	cfg := Config{BaseURL: srv.OpenAIBaseURL(), APIKey: testKey, Model: "llama-test", KeyHint: "models.local.api_key"}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func newServer(t *testing.T) *fakemodel.Server {
	t.Helper()
	srv := fakemodel.New()
	t.Cleanup(srv.Close)
	return srv
}

func userText(text string) engine.ModelRequest {
	return engine.ModelRequest{Messages: []engine.Message{{Role: engine.RoleUser, Text: text}}}
}

// providerError asserts err is an *engine.ProviderError with code and
// transience.
func providerError(t *testing.T, err error, code string, transient bool) *engine.ProviderError {
	t.Helper()
	var pe *engine.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a ProviderError", err, err)
	}
	if pe.Code != code || pe.Transient != transient {
		t.Fatalf("got code %q transient %v, want %q %v (%v)", pe.Code, pe.Transient, code, transient, pe)
	}
	return pe
}

// assertJSON compares JSON documents by value.
func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

func TestOpenAI_Text(t *testing.T) {
	srv := newServer(t)
	srv.Push(fakemodel.Text("Hello there."))
	m := newModel(t, srv, nil)

	req := userText("hi")
	req.System = "You are terse."
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "Hello there." || resp.StopReason != "end_turn" || len(resp.ToolCalls) != 0 {
		t.Fatalf("unexpected response %+v", resp)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Fatalf("usage not mapped: %+v", resp.Usage)
	}
	r := srv.Requests()[0]
	if r.Provider != fakemodel.ProviderOpenAI || r.Model != "llama-test" || r.Stream || r.System != "You are terse." {
		t.Fatalf("unexpected request %+v", r)
	}
	// Not OpenAI's own host: the widely supported max_tokens is sent.
	var body map[string]any
	json.Unmarshal(r.Raw, &body)
	if body["max_tokens"] != float64(DefaultMaxTokens) || body["max_completion_tokens"] != nil {
		t.Fatalf("unexpected token cap in %s", r.Raw)
	}
}

func TestOpenAI_ToolRoundTrip(t *testing.T) {
	srv := newServer(t)
	input := `{"city":"Paris","days":[1,2],"opts":{"metric":true}}`
	srv.Push(
		fakemodel.TextAndTools("Checking.", fakemodel.Call{Name: "weather", Input: input}),
		fakemodel.Text("Sunny."),
	)
	m := newModel(t, srv, nil)
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false,"$defs":{"x":{"type":"string"}}}`
	req := userText("weather?")
	req.Tools = []engine.ToolSpec{{Name: "weather", Description: "Forecast", InputSchema: json.RawMessage(schema)}}

	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "Checking." || resp.StopReason != "tool_use" || len(resp.ToolCalls) != 1 {
		t.Fatalf("unexpected response %+v", resp)
	}
	call := resp.ToolCalls[0]
	if call.Name != "weather" || !strings.HasPrefix(call.ID, "call_") {
		t.Fatalf("unexpected call %+v", call)
	}
	assertJSON(t, call.Input, input)

	var sent struct {
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	json.Unmarshal(srv.Requests()[0].Raw, &sent)
	if len(sent.Tools) != 1 || sent.Tools[0].Type != "function" || sent.Tools[0].Function.Name != "weather" ||
		sent.Tools[0].Function.Description != "Forecast" {
		t.Fatalf("unexpected tools %+v", sent.Tools)
	}
	assertJSON(t, sent.Tools[0].Function.Parameters, schema)

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
	args, _ := json.Marshal(input)
	assertJSON(t, srv.Requests()[1].Messages, `[
		{"role":"user","content":"weather?"},
		{"role":"assistant","content":"Checking.","tool_calls":[
			{"id":"`+call.ID+`","type":"function","function":{"name":"weather","arguments":`+string(args)+`}}]},
		{"role":"tool","tool_call_id":"`+call.ID+`","content":"{\"sky\":\"clear\"}"}
	]`)
}

func TestOpenAI_HistoryMapping(t *testing.T) {
	srv := newServer(t)
	m := newModel(t, srv, nil)
	req := engine.ModelRequest{
		System:    "sys",
		MaxTokens: 77,
		Messages: []engine.Message{
			{Role: engine.RoleUser, Text: "weather and time?"},
			{Role: engine.RoleAssistant, Text: "Let me check.", ToolCalls: []engine.ToolCall{
				{ID: "c1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "c2", Name: "time"},
			}},
			// Steering typed while the tools ran, then the results: the tool
			// messages must still follow the assistant's calls.
			{Role: engine.RoleUser, Text: "hurry"},
			{Role: engine.RoleUser, ToolResults: []engine.ToolResult{
				{CallID: "c1", Content: "sunny"},
				{CallID: "c2", Content: "clock broke", IsError: true},
			}, Text: "thanks"},
			{Role: engine.RoleAssistant, Text: "Sunny;"},
			{Role: engine.RoleAssistant, Text: "time unknown."},
			{Role: engine.RoleUser, Text: "ok"},
		},
	}
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r := srv.Requests()[0]
	assertJSON(t, r.Messages, `[
		{"role":"system","content":"sys"},
		{"role":"user","content":"weather and time?"},
		{"role":"assistant","content":"Let me check.","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"c2","type":"function","function":{"name":"time","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"sunny"},
		{"role":"tool","tool_call_id":"c2","content":"ERROR: clock broke"},
		{"role":"user","content":"hurry"},
		{"role":"user","content":"thanks"},
		{"role":"assistant","content":"Sunny;\ntime unknown."},
		{"role":"user","content":"ok"}
	]`)
	var body map[string]any
	json.Unmarshal(r.Raw, &body)
	if body["max_tokens"] != float64(77) {
		t.Fatalf("max_tokens in %s, want 77", r.Raw)
	}
}

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
	m, err := New(Config{APIKey: testKey, Model: "o3", HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), userText("hi"))
	providerError(t, err, engine.ProviderAuth, false)
	var sent map[string]any
	json.Unmarshal(body, &sent)
	if sent["max_completion_tokens"] != float64(DefaultMaxTokens) || sent["max_tokens"] != nil {
		t.Fatalf("unexpected token cap in %s", body)
	}
}

func TestOpenAI_InvalidToolArguments(t *testing.T) {
	// Broken JSON from the model reaches the engine as a JSON string, so the
	// engine's schema check can tell the model.
	srv := newServer(t)
	srv.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "call_x", Name: "t", Input: `{"a":`}))
	m := newModel(t, srv, nil)
	resp, err := m.Generate(t.Context(), userText("x"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	assertJSON(t, resp.ToolCalls[0].Input, `"{\"a\":"`)
}

func TestOpenAI_Errors(t *testing.T) {
	tests := []struct {
		name      string
		steps     []fakemodel.Step
		retries   int
		code      string
		transient bool
		status    int
		requests  int
	}{
		{"unauthorized", []fakemodel.Step{fakemodel.Fail(401, "Incorrect API key")}, 0, engine.ProviderAuth, false, 401, 1},
		{"bad request", []fakemodel.Step{fakemodel.Fail(400, "bad")}, 1, engine.ProviderInvalidRequest, false, 400, 1},
		{"model not found", []fakemodel.Step{fakemodel.Fail(404, "model not found")}, 0, engine.ProviderInvalidRequest, false, 404, 1},
		{"rate limited", []fakemodel.Step{fakemodel.Fail(429, "slow down")}, 0, engine.ProviderRateLimited, true, 429, 1},
		{"server error after a retry", []fakemodel.Step{fakemodel.Fail(500, "boom"), fakemodel.Fail(500, "boom")}, 1, engine.ProviderUnavailable, true, 500, 2},
		{"dropped connection", []fakemodel.Step{fakemodel.Disconnect()}, 0, engine.ProviderUnreachable, true, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Push(tt.steps...)
			srv.SetDefault(fakemodel.Text("should not be reached"))
			m := newModel(t, srv, func(c *Config) { c.MaxRetries = tt.retries })
			_, err := m.Generate(t.Context(), userText("hi"))
			pe := providerError(t, err, tt.code, tt.transient)
			if pe.Status != tt.status {
				t.Fatalf("status %d, want %d", pe.Status, tt.status)
			}
			if got := srv.Received(); got != tt.requests {
				t.Fatalf("server got %d requests, want %d", got, tt.requests)
			}
		})
	}
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
	m, err := New(Config{BaseURL: srv.URL + "/v1/", APIKey: testKey, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), userText("hi"))
	providerError(t, err, engine.ProviderAuth, false)
}

func TestOpenAI_WrongBaseURL(t *testing.T) {
	// A base URL that reaches a web page answers 200 with HTML.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html>hello</html>`))
	}))
	defer srv.Close()
	m, err := New(Config{BaseURL: srv.URL, APIKey: testKey, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), userText("hi"))
	pe := providerError(t, err, engine.ProviderUnavailable, true)
	if !strings.Contains(pe.Message, "base_url") {
		t.Fatalf("message %q does not hint at base_url", pe.Message)
	}
}

func TestOpenAI_RetrySucceeds(t *testing.T) {
	srv := newServer(t)
	srv.Push(fakemodel.Fail(503, "busy"), fakemodel.Text("ok"))
	m := newModel(t, srv, func(c *Config) { c.MaxRetries = 1 })
	resp, err := m.Generate(t.Context(), userText("hi"))
	if err != nil || resp.Text != "ok" {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

func TestOpenAI_ConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, err := New(Config{BaseURL: "http://" + addr + "/v1/", APIKey: testKey, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), userText("hi"))
	pe := providerError(t, err, engine.ProviderUnreachable, true)
	if pe.Status != 0 {
		t.Fatalf("status %d, want 0", pe.Status)
	}
}

func TestOpenAI_Cancelled(t *testing.T) {
	srv := newServer(t)
	srv.Push(fakemodel.Hold())
	m := newModel(t, srv, nil)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Generate(ctx, userText("hi"))
		errc <- err
	}()
	if _, err := srv.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	var pe *engine.ProviderError
	if errors.As(err, &pe) {
		t.Fatalf("cancellation reported as provider error %v", pe)
	}
}

func TestOpenAI_AttemptTimeoutIsProviderError(t *testing.T) {
	srv := newServer(t)
	srv.Push(fakemodel.Hold())
	m := newModel(t, srv, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	_, err := m.Generate(t.Context(), userText("hi"))
	providerError(t, err, engine.ProviderUnreachable, true)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("attempt timeout looks like the caller's deadline: %v", err)
	}
}

func TestOpenAI_EnvIgnored(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "bogus-env-key")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1/")
	t.Setenv("OPENAI_ORG_ID", "bogus-org")
	t.Setenv("OPENAI_PROJECT_ID", "bogus-project")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Bogus: 1")
	srv := newServer(t)
	srv.Push(fakemodel.Text("ok"))
	m := newModel(t, srv, nil)
	if _, err := m.Generate(t.Context(), userText("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r := srv.Requests()[0]
	if r.APIKey != testKey {
		t.Fatalf("sent key %q, want %q", r.APIKey, testKey)
	}
	for _, h := range []string{"X-Bogus", "OpenAI-Organization", "OpenAI-Project"} {
		if r.Header.Get(h) != "" {
			t.Fatalf("environment leaked header %s into the request", h)
		}
	}

	m = newModel(t, srv, func(c *Config) { c.APIKey = "" })
	_, err := m.Generate(t.Context(), userText("hi"))
	providerError(t, err, engine.ProviderNotConfigured, false)
}

func TestOpenAI_NotConfigured(t *testing.T) {
	srv := newServer(t)
	m := newModel(t, srv, func(c *Config) {
		c.APIKey = ""
		c.KeyHint = "models.local.api_key (OPENAI_API_KEY)"
	})
	_, err := m.Generate(t.Context(), userText("hi"))
	pe := providerError(t, err, engine.ProviderNotConfigured, false)
	if !strings.Contains(pe.Message, "models.local.api_key (OPENAI_API_KEY)") {
		t.Fatalf("message %q does not name the setting", pe.Message)
	}
	if srv.Received() != 0 {
		t.Fatal("a request was sent without a key")
	}
}

func TestNew_Invalid(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Model: "m", MaxRetries: -1},
		{Model: "m", MaxTokens: -1},
		{Model: "m", Timeout: -time.Second},
		{Model: "m", BaseURL: "127.0.0.1:11434/v1"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func readAll(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	return io.ReadAll(r.Body)
}
