package fakemodel

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
)

// Usage and prompt caching as the providers report them. The fake counts
// a request's input as its body's bytes / 4, and simulates each
// provider's prompt cache on top, so tests and benchmarks can see what
// caching saves:
//
//   - Anthropic caches explicitly: a prefix (tools, then system, then
//     messages, block by block) is written to the cache at each block that
//     carries cache_control, and a later request reads the longest cached
//     prefix it finds looking back at most 20 blocks from each of its own
//     breakpoints. Usage says input_tokens (after the last cache hit or
//     write), cache_creation_input_tokens and cache_read_input_tokens.
//   - OpenAI caches automatically: the longest prefix (tools, then
//     messages, message by message) of any earlier request is read from
//     the cache. Usage says prompt_tokens (all of it) and
//     prompt_tokens_details.cached_tokens.
//
// Unlike the real services the fake has no minimum cacheable length
// (1024 tokens) and no expiry; WithoutCache turns the simulation off.

// WithContextWindow makes the fake refuse requests whose input is over
// tokens, with the provider's own error: Anthropic's 400
// invalid_request_error "prompt is too long: N tokens > M maximum", or
// OpenAI's 400 context_length_exceeded.
func WithContextWindow(tokens int) Option { return func(h *Handler) { h.window = tokens } }

// WithoutCache reports every input token as uncached.
func WithoutCache() Option { return func(h *Handler) { h.noCache = true } }

// FailContextTooLong answers with the provider's context-window error, as
// if the request were one token over the window.
func FailContextTooLong() Step { return Step{kind: kindContextTooLong} }

// maxCacheEntries bounds the simulated cache; past it, it starts empty.
const maxCacheEntries = 1 << 16

// lookback is how many blocks before a breakpoint Anthropic checks for an
// earlier cache entry.
const lookback = 20

// promptTokens is the fake's count of a request's input tokens.
func promptTokens(req Request) int { return len(req.Raw)/4 + 1 }

// cacheUsage is how many of req's input tokens were read from and written
// to the simulated cache; it records req's prefixes for later requests.
func (h *Handler) cacheUsage(req Request) (read, written int) {
	if h.noCache {
		return 0, 0
	}
	blocks := promptBlocks(req)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cache == nil || len(h.cache) > maxCacheEntries {
		h.cache = map[[32]byte]bool{}
	}
	hit := -1
	if req.Provider == ProviderOpenAI {
		for i := len(blocks) - 1; i >= 0; i-- {
			if h.cache[blocks[i].prefix] {
				hit = i
				break
			}
		}
		for _, b := range blocks {
			h.cache[b.prefix] = true
		}
		return tokensUpTo(blocks, hit), 0
	}
	last := -1
	for i, b := range blocks {
		if !b.breakpoint {
			continue
		}
		last = i
		for j := i; j >= 0 && j >= i-lookback; j-- {
			if h.cache[blocks[j].prefix] {
				hit = max(hit, j)
				break
			}
		}
	}
	for _, b := range blocks {
		if b.breakpoint {
			h.cache[b.prefix] = true
		}
	}
	read = tokensUpTo(blocks, hit)
	if last > hit {
		written = tokensUpTo(blocks, last) - read
	}
	return read, written
}

// splitUsage is what a provider reports for req: uncached input, cache
// reads and writes; their sum is promptTokens.
func (h *Handler) splitUsage(req Request) (uncached, read, written int) {
	total := promptTokens(req)
	read, written = h.cacheUsage(req)
	if read+written > total {
		// Block sizes are counted on re-encoded JSON, which can be longer
		// than the body; the body's count wins.
		written = max(total-read, 0)
		read = min(read, total)
	}
	return total - read - written, read, written
}

func tokensUpTo(blocks []promptBlock, i int) int {
	n := 0
	for j := 0; j <= i && j < len(blocks); j++ {
		n += blocks[j].tokens
	}
	return n
}

// promptBlock is one cacheable unit of a request: its size, whether it
// carries a breakpoint, and the hash of the prefix it ends.
type promptBlock struct {
	tokens     int
	breakpoint bool
	prefix     [32]byte
}

// promptBlocks splits req into the units its provider caches, in cache
// order. Each block is re-encoded without its cache_control, so a block
// hashes the same whether or not it carries the breakpoint this time.
func promptBlocks(req Request) []promptBlock {
	var body struct {
		Tools    []json.RawMessage `json:"tools"`
		System   json.RawMessage   `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(req.Raw, &body) != nil {
		return nil
	}
	var out []promptBlock
	h := sha256.New()
	add := func(kind string, raw json.RawMessage) {
		canon, bp := canonical(raw)
		fmt.Fprintf(h, "%s:%d:", kind, len(canon))
		h.Write(canon)
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		out = append(out, promptBlock{tokens: len(canon)/4 + 1, breakpoint: bp, prefix: sum})
	}
	for _, t := range body.Tools {
		add("tool", t)
	}
	if req.Provider == ProviderOpenAI {
		for _, m := range body.Messages {
			raw, _ := json.Marshal(m)
			add("message", raw)
		}
		return out
	}
	for _, b := range blocksOf(body.System) {
		add("system", b)
	}
	for _, m := range body.Messages {
		for _, b := range blocksOf(m.Content) {
			add(m.Role, b)
		}
	}
	return out
}

// blocksOf is a content field's blocks: a plain string is one block.
func blocksOf(raw json.RawMessage) []json.RawMessage {
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) == nil {
		return blocks
	}
	if len(raw) == 0 {
		return nil
	}
	return []json.RawMessage{raw}
}

// canonical re-encodes a block without cache_control (object keys
// sorted) and reports whether it had one.
func canonical(raw json.RawMessage) ([]byte, bool) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw, false
	}
	_, bp := m["cache_control"]
	delete(m, "cache_control")
	b, err := json.Marshal(m)
	if err != nil {
		return raw, bp
	}
	return b, bp
}

// writeContextError answers with req's provider's context-window error.
func writeContextError(w http.ResponseWriter, req Request, tokens, window int) {
	if req.Provider == ProviderOpenAI {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Param   string `json:"param"`
				Code    string `json:"code"`
			} `json:"error"`
		}
		e.Error.Message = fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, tokens)
		e.Error.Type, e.Error.Param, e.Error.Code = "invalid_request_error", "messages", "context_length_exceeded"
		b, _ := json.Marshal(e)
		setErrorHeaders(w, http.StatusBadRequest)
		w.WriteHeader(http.StatusBadRequest)
		w.Write(b)
		return
	}
	anthropicAPI{}.writeError(w, http.StatusBadRequest, fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, window))
}
