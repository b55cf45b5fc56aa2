// Package openai is the engine.Model adapter for the OpenAI Chat
// Completions API on openai-go, and so for any OpenAI-compatible server
// (Ollama, vLLM, llama.cpp): point BaseURL at its /v1/ root. It reads
// nothing from the environment: the caller passes the key, base URL and
// retry policy in Config.
//
// It imports engine and the SDK only.
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"brain/engine"
)

// Defaults for Config fields left zero.
const (
	DefaultBaseURL   = "https://api.openai.com/v1/"
	DefaultMaxTokens = 4096
	// DefaultMaxRetries is the SDK's own default; Config.MaxRetries zero
	// means no retries, so callers wanting the usual policy pass this.
	DefaultMaxRetries = 2
)

// Config configures a Model.
type Config struct {
	// BaseURL is the API root that "chat/completions" is appended to, e.g.
	// http://127.0.0.1:11434/v1/ for Ollama; empty means OpenAI's own.
	BaseURL string
	// APIKey may be empty: Generate then fails with provider_not_configured.
	// Servers that want no key (Ollama) accept any value.
	APIKey string
	// KeyHint names the setting that holds the key, for that message, e.g.
	// "models.local.api_key (OPENAI_API_KEY)".
	KeyHint string
	Model   string
	// MaxTokens caps answers unless a request sets its own (DefaultMaxTokens).
	MaxTokens int
	// MaxRetries is how many times the SDK retries a 408/409/429/5xx or a
	// connection failure; zero means none.
	MaxRetries int
	// Timeout bounds each attempt; zero means none beyond the caller's
	// context.
	Timeout time.Duration
	// HTTPClient is optional.
	HTTPClient *http.Client
}

// Model is an engine.Model backed by a Chat Completions endpoint.
type Model struct {
	chat      openai.ChatCompletionService
	model     string
	maxTokens int64
	// completionTokens sends max_completion_tokens, which OpenAI's reasoning
	// models require; other servers only know the older max_tokens.
	completionTokens bool
	hasKey           bool
	keyHint          string
}

var _ engine.Model = (*Model)(nil)

// New returns a Model. It does no I/O.
func New(cfg Config) (*Model, error) {
	switch {
	case cfg.Model == "":
		return nil, errors.New("openai: model is required")
	case cfg.MaxTokens < 0:
		return nil, fmt.Errorf("openai: max_tokens must not be negative, got %d", cfg.MaxTokens)
	case cfg.MaxRetries < 0:
		return nil, fmt.Errorf("openai: max_retries must not be negative, got %d", cfg.MaxRetries)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("openai: timeout must not be negative, got %s", cfg.Timeout)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base_url %q is not an http(s) URL", base)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	// openai.NewClient prepends options read from OPENAI_* (key, base URL,
	// org, project, custom headers) and offers no public switch to stop it,
	// so the chat service is built from these options alone.
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	maxTokens := cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	hint := cfg.KeyHint
	if hint == "" {
		hint = "the model's api_key"
	}
	return &Model{
		chat:             openai.NewChatCompletionService(opts...),
		model:            cfg.Model,
		maxTokens:        int64(maxTokens),
		completionTokens: u.Host == "api.openai.com",
		hasKey:           cfg.APIKey != "",
		keyHint:          hint,
	}, nil
}

// Generate sends the conversation and returns the model's answer. With
// req.OnDelta set it streams, passing text on as it arrives; without, it
// asks for the whole answer at once, as servers that cannot stream need.
//
// Errors: the caller's context error (wrapped, errors.Is works) when ctx
// ends first; otherwise an *engine.ProviderError.
func (m *Model) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	if !m.hasKey {
		return engine.ModelResponse{}, &engine.ProviderError{
			Code:    engine.ProviderNotConfigured,
			Message: "openai: no API key configured; set " + m.keyHint,
		}
	}
	params, err := m.params(req)
	if err != nil {
		return engine.ModelResponse{}, err
	}
	// The raw response gives the status of errors the SDK could not decode
	// into an *openai.Error (servers that answer {"error":"text"}).
	var raw *http.Response
	var completion *openai.ChatCompletion
	if req.OnDelta != nil {
		completion, err = m.stream(ctx, params, req.OnDelta, &raw)
	} else {
		completion, err = m.chat.New(ctx, params, option.WithResponseInto(&raw))
	}
	if err != nil {
		return engine.ModelResponse{}, classify(ctx, err, raw)
	}
	if len(completion.Choices) == 0 {
		return engine.ModelResponse{}, &engine.ProviderError{
			Transient: true,
			Code:      engine.ProviderUnavailable,
			Message:   "openai: the answer has no choices",
		}
	}
	return response(completion), nil
}

// classify turns an SDK or transport error into what the engine expects.
func classify(ctx context.Context, err error, raw *http.Response) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("openai: %w", ctxErr)
	}
	var pe *engine.ProviderError
	if errors.As(err, &pe) {
		return pe
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		return markContextExceeded(engine.ClassifyStatus(apiErr.StatusCode, "openai: "+msg), apiErr.StatusCode, apiErr.Code, msg)
	}
	if raw != nil && raw.StatusCode >= 400 {
		return engine.ClassifyStatus(raw.StatusCode, "openai: "+http.StatusText(raw.StatusCode))
	}
	if raw != nil {
		// A 2xx that did not decode: not an OpenAI-compatible answer. Often a
		// base URL that misses /v1/ and reaches a web page.
		return &engine.ProviderError{
			Transient: true,
			Code:      engine.ProviderUnavailable,
			Status:    raw.StatusCode,
			Message:   "openai: malformed answer (is base_url the /v1/ root?): " + err.Error(),
		}
	}
	// Connection refused, reset, per-attempt timeout, TLS failure.
	return engine.ClassifyStatus(0, "openai: "+err.Error())
}

// defaultHTTPClient has its own connection pool. Turns run in parallel
// against one provider host, and net/http's default of two idle connections
// per host would make most calls dial anew.
func defaultHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// stream asks for the answer as a stream, hands each text piece to
// onDelta and returns the whole completion.
func (m *Model) stream(ctx context.Context, params openai.ChatCompletionNewParams, onDelta func(string), raw **http.Response) (*openai.ChatCompletion, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := m.chat.NewStreaming(ctx, params, option.WithResponseInto(raw))
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return nil, &engine.ProviderError{Transient: true, Code: engine.ProviderUnavailable, Message: "openai: malformed stream chunk"}
		}
		for _, c := range chunk.Choices {
			if c.Index == 0 && c.Delta.Content != "" {
				onDelta(c.Delta.Content)
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return &acc.ChatCompletion, nil
}
