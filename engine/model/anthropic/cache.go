package anthropic

import (
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"brain/engine"
)

// Prompt caching. A request carries cache_control breakpoints on its
// stable prefix, the tool definitions and the system prompt (the API
// caches in the order tools, system, messages), and at the end of the
// history, with one more at the end of the message before it: each tool
// round then reads everything up to the previous round from the cache
// (billed at a tenth of the input price) and pays the full price only for
// what is new. The API takes at most four breakpoints; these are four.
// The prefix is byte-identical from round to round because the engine
// sends the tools in a stable order and instructions without timestamps,
// and the adapter adds nothing that changes.

// addCacheBreakpoints marks p's stable prefix and its history's end.
func addCacheBreakpoints(p *anthropic.MessageNewParams) {
	if n := len(p.Tools); n > 0 {
		if cc := p.Tools[n-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
	}
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	n := len(p.Messages)
	markLastBlock(p.Messages, n-1)
	markLastBlock(p.Messages, n-2)
}

// markLastBlock sets a breakpoint on the last content block of message i.
func markLastBlock(msgs []anthropic.MessageParam, i int) {
	if i < 0 || i >= len(msgs) {
		return
	}
	var blocks []anthropic.ContentBlockParamUnion
	switch m := msgs[i]; {
	case m.OfUser != nil:
		blocks = m.OfUser.Content
	case m.OfAssistant != nil:
		blocks = m.OfAssistant.Content
	}
	if len(blocks) == 0 {
		return
	}
	if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
		*cc = anthropic.NewCacheControlEphemeralParam()
	}
}

// usage maps the API's usage. input_tokens counts only what was neither
// read from nor written to the cache; engine.Usage.InputTokens is all of it.
func usage(u anthropic.Usage) engine.Usage {
	return engine.Usage{
		InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

// markContextExceeded flags the API's refusal of a prompt longer than the
// context window: a 400 invalid_request_error "prompt is too long: N
// tokens > M maximum", or a 413 request_too_large (the request's bytes).
func markContextExceeded(pe *engine.ProviderError, status int, errType, message string) *engine.ProviderError {
	tooLong := status == http.StatusBadRequest && errType == "invalid_request_error" &&
		strings.Contains(strings.ToLower(message), "prompt is too long")
	if tooLong || status == http.StatusRequestEntityTooLarge {
		pe.ContextExceeded = true
	}
	return pe
}
