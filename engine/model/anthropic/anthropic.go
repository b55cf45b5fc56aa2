// Package anthropic is the engine.Model adapter for Anthropic's Messages
// API, on anthropic-sdk-go. It reads nothing from the environment: the
// caller passes the key, base URL and retry policy in Config.
//
// It imports engine and the SDK only.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"brain/engine"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxTokens = 4096
	// DefaultMaxRetries is the SDK's own default; Config.MaxRetries zero
	// means no retries, so callers wanting the usual policy pass this.
	DefaultMaxRetries = 2
)

// Config configures a Model.
type Config struct {
	// BaseURL is the API root (the SDK appends v1/messages); empty means
	// Anthropic's own.
	BaseURL string
	// APIKey may be empty: Generate then fails with provider_not_configured,
	// so the daemon can start and tell the user what to fill in.
	APIKey string
	// KeyHint names the setting that holds the key, for that message, e.g.
	// "models.default.api_key (ANTHROPIC_API_KEY)".
	KeyHint string
	Model   string
	// MaxTokens caps answers unless a request sets its own (DefaultMaxTokens).
	MaxTokens int
	// MaxRetries is how many times the SDK retries a 408/409/429/5xx or a
	// connection failure; zero means none.
	MaxRetries int
	// Timeout bounds each attempt, stream included; zero means none beyond
	// the caller's context.
	Timeout time.Duration
	// HTTPClient is optional.
	HTTPClient *http.Client
}

// Model is an engine.Model backed by the Anthropic Messages API.
type Model struct {
	client    anthropic.Client
	model     string
	maxTokens int64
	hasKey    bool
	keyHint   string
}

var _ engine.Model = (*Model)(nil)

// New returns a Model. It does no I/O.
func New(cfg Config) (*Model, error) {
	switch {
	case cfg.Model == "":
		return nil, errors.New("anthropic: model is required")
	case cfg.MaxTokens < 0:
		return nil, fmt.Errorf("anthropic: max_tokens must not be negative, got %d", cfg.MaxTokens)
	case cfg.MaxRetries < 0:
		return nil, fmt.Errorf("anthropic: max_retries must not be negative, got %d", cfg.MaxRetries)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("anthropic: timeout must not be negative, got %s", cfg.Timeout)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	// WithoutEnvironmentDefaults stops NewClient from reading ANTHROPIC_*
	// (key, auth token, profile, federation, base URL, custom headers); an
	// explicit WithAPIKey alone would still let ANTHROPIC_BASE_URL and
	// ANTHROPIC_CUSTOM_HEADERS through. Spans are off: brain sets up no
	// OpenTelemetry, and this keeps ANTHROPIC_OPEN_TELEMETRY_* inert too.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(hc),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
		option.WithoutOpenTelemetry(),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
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
		client:    anthropic.NewClient(opts...),
		model:     cfg.Model,
		maxTokens: int64(maxTokens),
		hasKey:    cfg.APIKey != "",
		keyHint:   hint,
	}, nil
}

// Generate sends the conversation and returns the model's answer. It
// streams, so long answers are not cut by the non-streaming time limits,
// passes text to req.OnDelta as it arrives, and returns once the whole
// message has arrived.
//
// Errors: the caller's context error (wrapped, errors.Is works) when ctx
// ends first; otherwise an *engine.ProviderError.
func (m *Model) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	if !m.hasKey {
		return engine.ModelResponse{}, &engine.ProviderError{
			Code:    engine.ProviderNotConfigured,
			Message: "anthropic: no API key configured; set " + m.keyHint,
		}
	}
	params, err := m.params(req)
	if err != nil {
		return engine.ModelResponse{}, err
	}
	stream := m.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	var msg anthropic.Message
	complete := false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return engine.ModelResponse{}, classify(ctx, malformed(err.Error()))
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && req.OnDelta != nil && ev.Delta.Text != "" {
			req.OnDelta(ev.Delta.Text)
		}
		if ev.Type == "message_stop" {
			complete = true
		}
	}
	if err := stream.Err(); err != nil {
		return engine.ModelResponse{}, classify(ctx, err)
	}
	if !complete {
		// The body ended cleanly but early: a proxy or the server dropped us.
		return engine.ModelResponse{}, classify(ctx, engine.ClassifyStatus(0, "anthropic: stream ended before message_stop"))
	}
	return response(msg), nil
}

// classify turns an SDK or transport error into what the engine expects.
func classify(ctx context.Context, err error) error {
	// The SDK returns the context's error as is, but a cancelled stream
	// surfaces as a read error: the context decides.
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("anthropic: %w", ctxErr)
	}
	var pe *engine.ProviderError
	if errors.As(err, &pe) {
		return pe
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		if status < 400 {
			// An error event inside a stream arrives on a 200 response; its
			// type says what happened (overloaded_error is transient).
			status = statusOfType(string(apiErr.Type()))
		}
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(status)
		}
		return markContextExceeded(engine.ClassifyStatus(status, "anthropic: "+msg), status, string(apiErr.Type()), msg)
	}
	// Connection refused, reset, per-attempt timeout, TLS failure.
	return engine.ClassifyStatus(0, "anthropic: "+err.Error())
}

// statusOfType maps an Anthropic error type to the HTTP status that the API
// sends with it outside a stream.
func statusOfType(t string) int {
	switch t {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	default:
		return http.StatusInternalServerError
	}
}

// malformed reports a stream the SDK could not make sense of; a retry may
// well succeed, so it is transient.
func malformed(detail string) *engine.ProviderError {
	return &engine.ProviderError{
		Transient: true,
		Code:      engine.ProviderUnavailable,
		Message:   "anthropic: malformed stream: " + detail,
	}
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
