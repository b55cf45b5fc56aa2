package modeltest

import (
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// contextWindow: a request over the model's context window, refused with
// the provider's own error (Anthropic's "prompt is too long", OpenAI's
// context_length_exceeded), is a permanent invalid request marked
// ContextExceeded, so the engine compacts and retries; other invalid
// requests are not marked.
func (s Suite) contextWindow(t *testing.T) {
	srv := NewServer(t, fakemodel.WithContextWindow(50))
	m := s.model(t, srv, func(c *Config) { c.MaxRetries = 1 })
	_, err := m.Generate(t.Context(), UserText(strings.Repeat("far too long ", 100)))
	pe := ProviderError(t, err, engine.ProviderInvalidRequest, false)
	if !pe.ContextExceeded || pe.Status != 400 || srv.Received() != 1 {
		t.Fatalf("over the window: %+v after %d requests, want ContextExceeded from one 400", pe, srv.Received())
	}
	resp, err := m.Generate(t.Context(), UserText("short"))
	if err != nil || resp.Text == "" {
		t.Fatalf("under the window: %+v, %v", resp, err)
	}

	srv.Push(fakemodel.FailContextTooLong(), fakemodel.Fail(400, "messages: empty"))
	_, err = m.Generate(t.Context(), UserText("hi"))
	if pe := ProviderError(t, err, engine.ProviderInvalidRequest, false); !pe.ContextExceeded {
		t.Errorf("scripted context error: %+v", pe)
	}
	_, err = m.Generate(t.Context(), UserText("hi"))
	if pe := ProviderError(t, err, engine.ProviderInvalidRequest, false); pe.ContextExceeded {
		t.Errorf("another invalid request is marked ContextExceeded: %+v", pe)
	}
}

// cachedUsage: the second of two requests that share a prefix reports part
// of its input as read from the cache, within the input it reports.
func (s Suite) cachedUsage(t *testing.T) {
	srv := NewServer(t)
	srv.SetDefault(fakemodel.Text("ok"))
	m := s.model(t, srv, nil)
	req := HistoryRequest()
	first, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, engine.Message{Role: engine.RoleAssistant, Text: "ok"}, engine.Message{Role: engine.RoleUser, Text: "and now?"})
	second, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	u := second.Usage
	if first.Usage.CacheReadTokens != 0 || u.CacheReadTokens == 0 || u.InputTokens <= first.Usage.InputTokens ||
		u.UncachedInputTokens() < 0 || u.UncachedInputTokens() >= u.InputTokens {
		t.Fatalf("usage %+v then %+v: the second should read the first's prefix from the cache", first.Usage, u)
	}
}
