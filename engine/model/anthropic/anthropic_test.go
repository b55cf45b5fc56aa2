package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

const testKey = "test-key"

// newModel returns a Model pointed at srv with no retries; edit adjusts
// the config.
func newModel(t *testing.T, srv *fakemodel.Server, edit func(*Config)) *Model {
	t.Helper()
	cfg := Config{BaseURL: srv.URL(), APIKey: testKey, Model: "claude-test", KeyHint: "models.default.api_key"}
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

func TestAnthropic_Text(t *testing.T) {
	srv := newServer(t)
	srv.Push(fakemodel.Text("Hello there, ünïcode included."))
	m := newModel(t, srv, nil)

	req := userText("hi")
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
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Provider != fakemodel.ProviderAnthropic || r.Model != "claude-test" || !r.Stream || r.System != "You are terse." {
		t.Fatalf("unexpected request %+v", r)
	}
	var body struct {
		MaxTokens int `json:"max_tokens"`
	}
	json.Unmarshal(r.Raw, &body)
	if body.MaxTokens != DefaultMaxTokens {
		t.Fatalf("max_tokens %d, want %d", body.MaxTokens, DefaultMaxTokens)
	}
}

func TestAnthropic_ToolRoundTrip(t *testing.T) {
	srv := newServer(t)
	input := `{"city":"Paris","days":[1,2],"opts":{"metric":true}}`
	srv.Push(
		fakemodel.TextAndTools("Checking.", fakemodel.Call{Name: "weather", Input: input}),
		fakemodel.Text("Sunny."),
	)
	m := newModel(t, srv, nil)
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`
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
	if call.Name != "weather" || !strings.HasPrefix(call.ID, "toolu_") {
		t.Fatalf("unexpected call %+v", call)
	}
	assertJSON(t, call.Input, input)

	// The tool's schema went out verbatim.
	var sent struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	json.Unmarshal(srv.Requests()[0].Raw, &sent)
	if len(sent.Tools) != 1 || sent.Tools[0].Name != "weather" || sent.Tools[0].Description != "Forecast" {
		t.Fatalf("unexpected tools %+v", sent.Tools)
	}
	assertJSON(t, sent.Tools[0].InputSchema, schema)

	// Second leg: the call and its result go back.
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
	assertJSON(t, srv.Requests()[1].Messages, `[
		{"role":"user","content":[{"type":"text","text":"weather?"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Checking."},
			{"type":"tool_use","id":"`+call.ID+`","name":"weather","input":`+input+`}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"`+call.ID+`","content":[{"type":"text","text":"{\"sky\":\"clear\"}"}]}]}
	]`)
}

func TestAnthropic_HistoryMapping(t *testing.T) {
	srv := newServer(t)
	m := newModel(t, srv, nil)
	req := engine.ModelRequest{
		System:    "sys",
		MaxTokens: 77,
		Messages: []engine.Message{
			{Role: engine.RoleUser, Text: "weather and time?"},
			{Role: engine.RoleAssistant, Text: "Let me check.", ToolCalls: []engine.ToolCall{
				{ID: "c1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "c2", Name: "time"},                                     // no input
				{ID: "c3", Name: "broken", Input: json.RawMessage(`"oops"`)}, // not an object
			}},
			// Steering typed while the tools ran, then the results: one user
			// message, tool results first.
			{Role: engine.RoleUser, Text: "hurry"},
			{Role: engine.RoleUser, ToolResults: []engine.ToolResult{
				{CallID: "c1", Content: "sunny"},
				{CallID: "c2", Content: "clock broke", IsError: true},
				{CallID: "c3", Content: "", IsError: true},
			}, Text: "thanks"},
			{Role: engine.RoleAssistant, Text: "Sunny; time unknown."},
			{Role: engine.RoleAssistant, Text: ""}, // empty: dropped
			{Role: engine.RoleUser, Text: "ok"},
		},
	}
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r := srv.Requests()[0]
	assertJSON(t, r.Messages, `[
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
		{"role":"assistant","content":[{"type":"text","text":"Sunny; time unknown."}]},
		{"role":"user","content":[{"type":"text","text":"ok"}]}
	]`)
	var body struct {
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
	}
	json.Unmarshal(r.Raw, &body)
	if body.MaxTokens != 77 {
		t.Fatalf("max_tokens %d, want 77", body.MaxTokens)
	}
	assertJSON(t, body.System, `[{"type":"text","text":"sys"}]`)
}

func TestAnthropic_NonStreamingFakeAnswer(t *testing.T) {
	// The fake also answers non-streaming requests; the adapter always
	// streams, so this checks the fake alone against the SDK's decoder.
	srv := newServer(t)
	srv.Push(fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_1", Name: "t", Input: `{"a":1}`}))
	m := newModel(t, srv, nil)
	msg, err := m.client.Messages.New(t.Context(), mustParams(t, m, userText("x")))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	resp := response(*msg)
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "toolu_1" || resp.StopReason != "tool_use" {
		t.Fatalf("unexpected response %+v", resp)
	}
	assertJSON(t, resp.ToolCalls[0].Input, `{"a":1}`)
	if srv.Requests()[0].Stream {
		t.Fatal("request recorded as streaming")
	}
}

func mustParams(t *testing.T, m *Model, req engine.ModelRequest) anthropic.MessageNewParams {
	t.Helper()
	p, err := m.params(req)
	if err != nil {
		t.Fatalf("params: %v", err)
	}
	return p
}

func TestAnthropic_Errors(t *testing.T) {
	tests := []struct {
		name      string
		steps     []fakemodel.Step
		retries   int
		code      string
		transient bool
		status    int
		requests  int
	}{
		{"unauthorized", []fakemodel.Step{fakemodel.Fail(401, "invalid x-api-key")}, 0, engine.ProviderAuth, false, 401, 1},
		{"bad request", []fakemodel.Step{fakemodel.Fail(400, "messages: empty")}, 1, engine.ProviderInvalidRequest, false, 400, 1},
		{"rate limited", []fakemodel.Step{fakemodel.Fail(429, "slow down")}, 0, engine.ProviderRateLimited, true, 429, 1},
		{"server error after a retry", []fakemodel.Step{fakemodel.Fail(500, "boom"), fakemodel.Fail(500, "boom")}, 1, engine.ProviderUnavailable, true, 500, 2},
		{"overloaded mid-stream", []fakemodel.Step{fakemodel.FailMidStream(529, "Overloaded")}, 0, engine.ProviderUnavailable, true, 529, 1},
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

func TestAnthropic_RetrySucceeds(t *testing.T) {
	srv := newServer(t)
	srv.Push(fakemodel.Fail(503, "busy"), fakemodel.Text("ok"))
	m := newModel(t, srv, func(c *Config) { c.MaxRetries = 1 })
	resp, err := m.Generate(t.Context(), userText("hi"))
	if err != nil || resp.Text != "ok" {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

func TestAnthropic_ConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, err := New(Config{BaseURL: "http://" + addr, APIKey: testKey, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), userText("hi"))
	pe := providerError(t, err, engine.ProviderUnreachable, true)
	if pe.Status != 0 {
		t.Fatalf("status %d, want 0", pe.Status)
	}
}

func TestAnthropic_Cancelled(t *testing.T) {
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

func TestAnthropic_DeadlineFromCaller(t *testing.T) {
	srv := newServer(t)
	srv.Push(fakemodel.Hold())
	m := newModel(t, srv, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := m.Generate(ctx, userText("hi"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
}

func TestAnthropic_AttemptTimeoutIsProviderError(t *testing.T) {
	// Config.Timeout expiring is the provider being slow, not the caller
	// giving up: a transient provider error.
	srv := newServer(t)
	srv.Push(fakemodel.Hold())
	m := newModel(t, srv, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	_, err := m.Generate(t.Context(), userText("hi"))
	providerError(t, err, engine.ProviderUnreachable, true)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("attempt timeout looks like the caller's deadline: %v", err)
	}
}

func TestAnthropic_EnvIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "bogus-env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "bogus-env-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Bogus: 1")
	t.Setenv("ANTHROPIC_PROFILE", "bogus-profile")
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
	if r.Header.Get("X-Bogus") != "" {
		t.Fatal("ANTHROPIC_CUSTOM_HEADERS leaked into the request")
	}

	// An empty key stays empty even though the environment has one.
	m = newModel(t, srv, func(c *Config) { c.APIKey = "" })
	_, err := m.Generate(t.Context(), userText("hi"))
	providerError(t, err, engine.ProviderNotConfigured, false)
}

func TestAnthropic_NotConfigured(t *testing.T) {
	srv := newServer(t)
	m := newModel(t, srv, func(c *Config) {
		c.APIKey = ""
		c.KeyHint = "models.default.api_key (ANTHROPIC_API_KEY)"
	})
	_, err := m.Generate(t.Context(), userText("hi"))
	pe := providerError(t, err, engine.ProviderNotConfigured, false)
	if !strings.Contains(pe.Message, "models.default.api_key (ANTHROPIC_API_KEY)") {
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
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
