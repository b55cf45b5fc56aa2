package modeltest

import (
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// environmentIgnored: the SDK's environment variables change nothing; the
// Config alone decides the key, the base URL and the headers.
func (s Suite) environmentIgnored(t *testing.T) {
	for k, v := range s.Env {
		t.Setenv(k, v)
	}
	srv := NewServer(t)
	srv.Push(fakemodel.Text("ok"))
	m := s.model(t, srv, nil)
	if _, err := m.Generate(t.Context(), UserText("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r := srv.Requests()[0]
	if r.APIKey != TestKey {
		t.Fatalf("sent key %q, want %q", r.APIKey, TestKey)
	}
	for _, h := range s.LeakHeaders {
		if r.Header.Get(h) != "" {
			t.Fatalf("environment leaked header %s into the request", h)
		}
	}
	// A token or an ID read from the environment would show in some header.
	for name, values := range r.Header {
		for _, v := range values {
			for k, bogus := range s.Env {
				if strings.Contains(v, bogus) {
					t.Fatalf("header %s: %q carries %s", name, v, k)
				}
			}
		}
	}

	// An empty key stays empty even though the environment has one.
	m = s.model(t, srv, func(c *Config) { c.APIKey = "" })
	_, err := m.Generate(t.Context(), UserText("hi"))
	ProviderError(t, err, engine.ProviderNotConfigured, false)
}

// notConfigured: without a key nothing is sent, and the error names the
// setting to fill in.
func (s Suite) notConfigured(t *testing.T) {
	const hint = "models.test.api_key (TEST_API_KEY)"
	srv := NewServer(t)
	m := s.model(t, srv, func(c *Config) {
		c.APIKey = ""
		c.KeyHint = hint
	})
	_, err := m.Generate(t.Context(), UserText("hi"))
	pe := ProviderError(t, err, engine.ProviderNotConfigured, false)
	if !strings.Contains(pe.Message, hint) {
		t.Fatalf("message %q does not name the setting", pe.Message)
	}
	if srv.Received() != 0 {
		t.Fatal("a request was sent without a key")
	}
}

// invalidConfig: New refuses a Config without a model or with a negative
// number.
func (s Suite) invalidConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Model: "m", MaxRetries: -1},
		{Model: "m", MaxTokens: -1},
		{Model: "m", Timeout: -time.Second},
	} {
		if _, err := s.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
