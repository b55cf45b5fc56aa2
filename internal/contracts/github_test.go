package contracts

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fill turns a path template into a concrete path.
func fill(template string) string {
	r := strings.NewReplacer("{owner}", "acme", "{repo}", "widgets", "{issue_number}", "7", "{pull_number}", "8",
		"{basehead}", "main...feature", "{ref}", "main", "{path}", "README.md", "{installation_id}", "42")
	return r.Replace(template)
}

// The description's own examples are what the fake answers where it has
// them, so each must match its operation's schema.
func TestGitHub_ExamplesMatchSchemas(t *testing.T) {
	g := LoadGitHub(t)
	for _, op := range GitHubOperations {
		method, template, _ := strings.Cut(op, " ")
		for _, status := range []int{200, 201} {
			exs := g.Examples(op, status)
			if len(exs) == 0 {
				continue
			}
			ex, _ := json.Marshal(exs[0])
			path := fill(template)
			if strings.HasPrefix(template, "/search/") {
				path += "?q=widgets"
			}
			r := httptest.NewRequest(method, path, nil)
			o, err := g.CheckRequest(r)
			if err != nil && method != "POST" && method != "PATCH" {
				t.Errorf("%s: %v", op, err)
				continue
			}
			h := http.Header{"Content-Type": {"application/json"}}
			if err := g.CheckResponse(r, o, status, h, ex); err != nil {
				t.Errorf("%s example %d: %v", op, status, err)
			} else {
				t.Logf("%s example %d ok (%d bytes)", op, status, len(ex))
			}
		}
	}
}

// The canary of TypeCheck: a misspelt field and a wrong type are refused,
// a right body is not.
func TestTypeCheck_Canary(t *testing.T) {
	const imports = `import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";`
	errs := TypeCheck(t, imports, []Body{
		{"right", "ChatCompletionCreateParamsNonStreaming", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5}`)},
		{"misspelt", "ChatCompletionCreateParamsNonStreaming", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_token":5}`)},
		{"nested misspelt", "ChatCompletionCreateParamsNonStreaming", []byte(`{"model":"m","messages":[{"role":"user","contnet":"hi"}]}`)},
		{"wrong type", "ChatCompletionCreateParamsNonStreaming", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":"hot"}`)},
	})
	if errs[0] != "" {
		t.Errorf("right body refused: %s", errs[0])
	}
	for i, want := range []string{"", "max_token", "contnet", "temperature"} {
		if i > 0 && !strings.Contains(errs[i], want) {
			t.Errorf("body %d: %q lacks %q", i, errs[i], want)
		}
	}
}
