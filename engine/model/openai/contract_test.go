package openai

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/model/modeltest"
	"brain/internal/contracts"
)

// recorder keeps every Chat Completions body the adapter sends, on its way
// to the fake model server (or, for OpenAI's own host, redirected to it).
type recorder struct {
	mu     sync.Mutex
	bodies []contracts.Body
	to     *url.URL // where api.openai.com requests go; nil: nowhere
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && strings.HasSuffix(req.URL.Path, "/chat/completions") {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		typ := "ChatCompletionCreateParamsNonStreaming"
		if bytes.Contains(body, []byte(`"stream":true`)) {
			typ = "ChatCompletionCreateParamsStreaming"
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, contracts.Body{Name: req.URL.Host, Type: typ, JSON: body})
		r.mu.Unlock()
	}
	if req.URL.Host == "api.openai.com" && r.to != nil {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host, req.Host = r.to.Scheme, r.to.Host, ""
	}
	return http.DefaultTransport.RoundTrip(req)
}

const chatTypes = `import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";`

// TestOpenAI_RequestsMatchTheSDKTypes: every body the adapter sends in the
// conformance suite (text, tools and their schemas, tool results, history,
// errors), with image, text and file parts, and to OpenAI's own host, is
// assignable to the official openai Node SDK's request types: no unknown
// field, no wrong type. OpenAI publishes no npm package with its OpenAPI
// description, so its SDK's types are the pinned contract.
func TestOpenAI_RequestsMatchTheSDKTypes(t *testing.T) {
	contracts.Require(t)
	rec := &recorder{}
	s := suite()
	s.New = func(c modeltest.Config) (engine.Model, error) {
		return New(Config{BaseURL: c.BaseURL, APIKey: c.APIKey, KeyHint: c.KeyHint, Model: c.Model,
			MaxTokens: c.MaxTokens, MaxRetries: c.MaxRetries, Timeout: c.Timeout, HTTPClient: &http.Client{Transport: rec}})
	}
	t.Run("conformance", func(t *testing.T) { modeltest.Run(t, s) })

	// Attachments, to a compatible server and to OpenAI's own host (which
	// takes PDFs as file parts and max_completion_tokens).
	srv := modeltest.NewServer(t)
	to, _ := url.Parse(srv.URL())
	rec.to = to
	atts := []engine.Attachment{
		{Name: "shot.png", MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nfake")},
		{Name: "spec.pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.4")},
		{Name: "notes.txt", Text: "file notes.txt:\nhello"},
	}
	for _, base := range []string{srv.URL() + "/v1/", ""} {
		srv.Push(fakemodel.Text("seen"))
		m, err := New(Config{BaseURL: base, APIKey: modeltest.TestKey, Model: "gpt-test", HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		req := modeltest.UserText("what is this?")
		req.Messages[0].Attachments = atts
		if _, err := m.Generate(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}

	rec.mu.Lock()
	bodies := rec.bodies
	rec.mu.Unlock()
	if len(bodies) < 10 {
		t.Fatalf("only %d bodies recorded", len(bodies))
	}
	var own bool
	for _, b := range bodies {
		own = own || b.Name == "api.openai.com" && bytes.Contains(b.JSON, []byte(`"type":"file"`))
	}
	if !own {
		t.Fatal("no body with a file part to OpenAI's own host")
	}
	// The canaries, checked in the same run: a tool whose parameters are
	// not an object and a misspelt field must be refused.
	canaries := []contracts.Body{
		{Name: "canary", Type: "ChatCompletionCreateParamsNonStreaming", JSON: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":"{}"}}]}`)},
		{Name: "canary", Type: "ChatCompletionCreateParamsNonStreaming", JSON: []byte(`{"model":"m","messages":[{"role":"tool","tool_call":"c1","content":"x"}]}`)},
	}
	errs := contracts.TypeCheck(t, chatTypes, append(bodies, canaries...))
	for i, err := range errs[:len(bodies)] {
		if err != "" {
			t.Errorf("body %d (%s): %s\n%s", i, bodies[i].Type, err, bodies[i].JSON)
		}
	}
	for i, err := range errs[len(bodies):] {
		if err == "" {
			t.Errorf("canary %d accepted: %s", i, canaries[i].JSON)
		}
	}
	t.Logf("%d bodies checked", len(bodies))
}
