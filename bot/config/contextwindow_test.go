package config

import (
	"math"
	"strings"
	"testing"
)

func TestContextWindowFor(t *testing.T) {
	for _, tt := range []struct {
		provider, model string
		want            int
	}{
		{"anthropic", "claude-sonnet-4-5", 200_000},
		{"openai", "gpt-4o-mini", 128_000},
		{"openai", "GPT-4.1-mini", 1_047_576},
		{"openai", "gpt-4", 8_192},
		{"openai", "gpt-4-turbo-preview", 128_000},
		{"openai", "openai/gpt-5", 400_000},
		{"openai", "llama3.1:70b", 131_072},
		{"openai", "my-finetune", DefaultContextWindow},
		{"fake", "fake-model", fakeContextWindow},
	} {
		if got := ContextWindowFor(tt.provider, tt.model); got != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.provider, tt.model, got, tt.want)
		}
	}
}

func TestDefaults_ContextWindow(t *testing.T) {
	c := validConfig()
	c.Models["big"] = ModelConfig{Provider: "openai", Model: "my-finetune", MaxTokens: 16_000}
	c.Models["set"] = ModelConfig{Provider: "openai", Model: "gpt-4o", ContextWindow: 32_000}
	c.ApplyDefaults()
	if got := c.Models["default"].ContextWindow; got != DefaultContextWindow {
		t.Errorf("unknown model: %d", got)
	}
	if got := c.Models["big"].ContextWindow; got != 32_000 {
		t.Errorf("max_tokens over the default window: %d, want twice max_tokens", got)
	}
	if got := c.Models["set"].ContextWindow; got != 32_000 {
		t.Errorf("a set window changed: %d", got)
	}
	if c.Limits.MaxParallelTools != defaultMaxParallelTools {
		t.Errorf("max_parallel_tools %d", c.Limits.MaxParallelTools)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidate_ContextWindowPriceAndParallelTools(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"window under max_tokens", func(c *Config) {
			c.Models["default"] = ModelConfig{Provider: "anthropic", Model: "m", ContextWindow: 4000, MaxTokens: 4096}
		}, "models.default.context_window: must be larger than max_tokens (4096), the part kept for the answer; got 4000"},
		{"negative price", func(c *Config) {
			c.Models["default"] = ModelConfig{Provider: "anthropic", Model: "m", Price: &PriceConfig{Input: 3, CachedRead: ptr(-0.3)}}
		}, "models.default.price.cache_read: must be >= 0"},
		{"parallel tools", func(c *Config) { c.Limits.MaxParallelTools = -1 }, "limits.max_parallel_tools: must be >= 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.mutate(c)
			c.ApplyDefaults()
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestPrice_Cost(t *testing.T) {
	p := PriceConfig{Input: 3, CachedRead: ptr(0.3), CacheWrite: ptr(3.75), Output: 15}
	if got := p.Cost(1_000_000, 1_000_000, 1_000_000, 1_000_000); math.Abs(got-22.05) > 1e-9 {
		t.Errorf("cost %v, want 22.05", got)
	}
	plain := PriceConfig{Input: 2, Output: 8}
	if got := plain.Cost(500_000, 250_000, 250_000, 100_000); math.Abs(got-2.8) > 1e-9 {
		t.Errorf("cache prices default to the input price: %v, want 2.8", got)
	}
}
