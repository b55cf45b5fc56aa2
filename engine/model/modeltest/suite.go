// Package modeltest is the conformance suite every engine.Model adapter
// runs: one set of behaviours (answers, tool calls, history, error
// classification, cancellation, timeouts, configuration) checked through the
// adapter's real SDK against the fake model server, engine/model/fakemodel.
// What differs between providers, the wire JSON above all, comes in the
// Suite; everything else is asserted here, once for all adapters.
//
// It imports engine and engine/model/fakemodel only.
package modeltest

import (
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// TestKey is the API key the suite configures.
const TestKey = "test-key"

// testModel is the model name the suite configures.
const testModel = "model-test"

// Config is the provider-neutral part of an adapter's configuration: the
// fields every adapter's Config has.
type Config struct {
	BaseURL    string
	APIKey     string
	KeyHint    string
	Model      string
	MaxTokens  int
	MaxRetries int
	Timeout    time.Duration
}

// Suite describes one adapter to the conformance tests. Every field is
// required unless its comment says otherwise.
type Suite struct {
	// New builds the adapter, doing no I/O. It fails on an invalid Config;
	// the Model is not used then.
	New func(Config) (engine.Model, error)
	// BasePath is appended to the fake server's root to make Config.BaseURL:
	// empty when the SDK adds the whole path (Anthropic: v1/messages), "/v1/"
	// when the base URL is the API root (OpenAI: chat/completions).
	BasePath string
	// Provider is the wire format the fake records the adapter's requests
	// in: fakemodel.ProviderAnthropic or fakemodel.ProviderOpenAI.
	Provider string
	// CallIDPrefix starts the tool call IDs the fake makes in that format.
	CallIDPrefix string
	// DefaultMaxTokens is the answer cap sent when neither the Config nor
	// the request sets one.
	DefaultMaxTokens int
	// MaxTokensKey is the request body key carrying the answer cap; empty
	// means "max_tokens", which Anthropic and Chat Completions share.
	MaxTokensKey string
	// Wire is what the adapter must send, in its provider's JSON.
	Wire Wire
	// Env is set while the adapter is built and called, to check that it
	// reads nothing of the environment: the Config's key and base URL are
	// used, no request header carries an Env value (so make them
	// distinctive, "bogus-..."), and LeakHeaders are absent.
	Env         map[string]string
	LeakHeaders []string
	// Errors are failures only this provider has, checked after the shared
	// ones (SharedErrors); optional.
	Errors []ErrorCase
}

// Wire holds request bodies in the provider's JSON. Each is a JSON object
// naming top-level keys of the body and their values, compared by value;
// keys it does not name are not compared, and null stands for absent.
type Wire struct {
	// Text is the body of TextAnswer (system prompt "You are terse.", no
	// answer cap in the Config or the request).
	Text string
	// Tools is the body of ToolRoundTrip's first request: the tool named
	// "weather", described "Forecast", with ToolSchema.
	Tools string
	// ToolResult is the body of ToolRoundTrip's second request, given the
	// call the model made: the call and its result {"sky":"clear"} sent back.
	ToolResult func(call engine.ToolCall) string
	// History is the body HistoryRequest is sent as.
	History string
}

// ErrorCase is a failure scripted on the fake and the ProviderError the
// adapter must turn it into.
type ErrorCase struct {
	Name      string
	Steps     []fakemodel.Step
	Retries   int // Config.MaxRetries
	Code      string
	Transient bool
	Status    int
	Requests  int // how many requests reach the server, retries included
}

// SharedErrors are the failures every adapter classifies alike.
func SharedErrors() []ErrorCase {
	return []ErrorCase{
		{"unauthorized", []fakemodel.Step{fakemodel.Fail(401, "invalid API key")}, 0, engine.ProviderAuth, false, 401, 1},
		// A permanent failure is not retried even when retries are allowed.
		{"bad request", []fakemodel.Step{fakemodel.Fail(400, "messages: empty")}, 1, engine.ProviderInvalidRequest, false, 400, 1},
		{"model not found", []fakemodel.Step{fakemodel.Fail(404, "model not found")}, 0, engine.ProviderInvalidRequest, false, 404, 1},
		{"rate limited", []fakemodel.Step{fakemodel.Fail(429, "slow down")}, 0, engine.ProviderRateLimited, true, 429, 1},
		{"server error after a retry", []fakemodel.Step{fakemodel.Fail(500, "boom"), fakemodel.Fail(500, "boom")}, 1, engine.ProviderUnavailable, true, 500, 2},
		{"dropped connection", []fakemodel.Step{fakemodel.Disconnect()}, 0, engine.ProviderUnreachable, true, 0, 1},
	}
}

// Run runs the conformance tests against the adapter s describes, each as
// a subtest named for the behaviour. It must not run in parallel with
// other tests: EnvironmentIgnored sets environment variables.
func Run(t *testing.T, s Suite) {
	s.validate(t)
	if s.MaxTokensKey == "" {
		s.MaxTokensKey = "max_tokens"
	}
	t.Run("TextAnswer", s.textAnswer)
	t.Run("ToolRoundTrip", s.toolRoundTrip)
	t.Run("HistoryMapping", s.historyMapping)
	t.Run("Deltas", s.deltas)
	t.Run("Errors", s.failures)
	t.Run("RetryThenSuccess", s.retryThenSuccess)
	t.Run("ConnectionRefused", s.connectionRefused)
	t.Run("Cancelled", s.cancelled)
	t.Run("CallerDeadline", s.callerDeadline)
	t.Run("AttemptTimeoutIsProviderError", s.attemptTimeout)
	t.Run("EnvironmentIgnored", s.environmentIgnored)
	t.Run("NotConfigured", s.notConfigured)
	t.Run("InvalidConfig", s.invalidConfig)
	t.Run("ContextWindow", s.contextWindow)
	t.Run("CachedUsage", s.cachedUsage)
}

// Benchmark measures the adapter and the fake together: the floor of one
// model call in the engine benchmark.
func Benchmark(b *testing.B, s Suite) {
	srv := fakemodel.New(fakemodel.WithRecordLimit(0))
	defer srv.Close()
	srv.SetDefault(fakemodel.TextAndTools("hello", fakemodel.Call{Name: "t", Input: `{"x":1}`}))
	m, err := s.New(Config{BaseURL: srv.URL() + s.BasePath, APIKey: "k", Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	req := UserText("hi")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.Generate(b.Context(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// validate fails when a required field is missing, so that no check of the
// suite passes for want of something to compare with.
func (s Suite) validate(t *testing.T) {
	t.Helper()
	switch {
	case s.New == nil:
		t.Fatal("modeltest: Suite.New is required")
	case s.Provider == "" || s.CallIDPrefix == "":
		t.Fatal("modeltest: Suite.Provider and Suite.CallIDPrefix are required")
	case s.DefaultMaxTokens <= 0:
		t.Fatal("modeltest: Suite.DefaultMaxTokens is required")
	case s.Wire.Text == "" || s.Wire.Tools == "" || s.Wire.ToolResult == nil || s.Wire.History == "":
		t.Fatal("modeltest: every field of Suite.Wire is required")
	case len(s.Env) == 0 || len(s.LeakHeaders) == 0:
		t.Fatal("modeltest: Suite.Env and Suite.LeakHeaders are required")
	}
}

// model returns the adapter pointed at srv with no retries; edit adjusts
// the config.
func (s Suite) model(t *testing.T, srv *fakemodel.Server, edit func(*Config)) engine.Model {
	t.Helper()
	cfg := Config{BaseURL: srv.URL() + s.BasePath, APIKey: TestKey, Model: testModel, KeyHint: "models.test.api_key"}
	if edit != nil {
		edit(&cfg)
	}
	m, err := s.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}
