package openai

import (
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"

	"brain/engine"
)

// OpenAI caches a request's longest prefix seen recently on its own (as
// do vLLM's prefix caching and others): the adapter keeps the prefix
// stable (system message first, tools in the engine's stable order) and
// reads how much of the prompt was cached.

// usage maps the API's usage: prompt_tokens counts all the input, of which
// prompt_tokens_details.cached_tokens were read from the cache.
func usage(u openai.CompletionUsage) engine.Usage {
	return engine.Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		CacheReadTokens: u.PromptTokensDetails.CachedTokens,
	}
}

// markContextExceeded flags a refusal of a prompt longer than the context
// window: OpenAI's code context_length_exceeded, or the message that
// OpenAI-compatible servers (vLLM, llama.cpp) send without that code
// ("This model's maximum context length is N tokens ...").
func markContextExceeded(pe *engine.ProviderError, status int, code, message string) *engine.ProviderError {
	msg := strings.ToLower(message)
	if code == "context_length_exceeded" ||
		status == http.StatusBadRequest && (strings.Contains(msg, "maximum context length") || strings.Contains(msg, "context length exceeded")) {
		pe.ContextExceeded = true
	}
	return pe
}
