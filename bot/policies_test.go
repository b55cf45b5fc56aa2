package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/bot/config"
)

func loadPolicies(t *testing.T, yaml string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("models: {default: {provider: fake}}\nagents: [{name: default}]\n"+yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestREADME_PolicyExamples loads the README's worked examples as written,
// so the documentation cannot drift from what brain accepts and matches.
func TestREADME_PolicyExamples(t *testing.T) {
	raw, err := os.ReadFile("../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "Three worked examples:\n\n```yaml\n")
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("the README has no worked policy examples")
	}
	set, err := loadPolicies(t, block).ApprovalPolicies()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ tool, input, want string }{
		{"credit_lookup", `{}`, "lookups-are-reads"},
		{"github_create_pull_request", `{"repo":"acme/api","head":"x","base":"main","title":"t"}`, "two-for-the-api"},
		{"github_create_pull_request", `{"repo":"acme/web"}`, ""},
		{"create_ticket", `{"priority":"P0"}`, "no-p0-from-the-agent"},
		{"create_ticket", `{"priority":"P1"}`, ""},
	} {
		if p, _ := set.Match(tt.tool, json.RawMessage(tt.input)); p.Name != tt.want {
			t.Errorf("Match(%s, %s) = %q, want %q", tt.tool, tt.input, p.Name, tt.want)
		}
	}
	if p, _ := set.Match("github_create_pull_request", json.RawMessage(`{"repo":"acme/api"}`)); p.Require != 2 || !p.ForbidSelf {
		t.Errorf("two-for-the-api = %+v", p)
	}
}
