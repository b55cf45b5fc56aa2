package config

import "strings"

// Context windows, in tokens, of common models, by name prefix (longest
// first wins), from the providers' model pages. A model brain does not know
// gets DefaultContextWindow: small enough for most self-hosted servers'
// defaults, so brain compacts early rather than meets a provider error.
var knownContextWindows = []struct {
	prefix string
	tokens int
}{
	{"claude-", 200_000},
	{"gpt-5", 400_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4", 8_192},
	{"gpt-3.5-turbo", 16_385},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
	{"llama3.1", 131_072},
	{"llama3.2", 131_072},
	{"llama3", 8_192},
	{"qwen2.5", 32_768},
	{"mistral", 32_768},
}

// DefaultContextWindow is the context window of a model not in the table.
const DefaultContextWindow = 8_192

// fakeContextWindow is the fake model server's: it has no limit of its own.
const fakeContextWindow = 200_000

// ContextWindowFor is the default context_window of a model.
func ContextWindowFor(provider, model string) int {
	if provider == "fake" {
		return fakeContextWindow
	}
	name := strings.ToLower(model)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:] // "openai/gpt-4o" on a router
	}
	best, tokens := 0, DefaultContextWindow
	for _, k := range knownContextWindows {
		if strings.HasPrefix(name, k.prefix) && len(k.prefix) > best {
			best, tokens = len(k.prefix), k.tokens
		}
	}
	return tokens
}

// Cost is the estimated price, in US dollars, of the tokens given.
func (p PriceConfig) Cost(uncachedInput, cacheRead, cacheWrite, output int64) float64 {
	read, write := p.Input, p.Input
	if p.CachedRead != nil {
		read = *p.CachedRead
	}
	if p.CacheWrite != nil {
		write = *p.CacheWrite
	}
	return (float64(uncachedInput)*p.Input + float64(cacheRead)*read + float64(cacheWrite)*write + float64(output)*p.Output) / 1e6
}
