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

// TestCheckConfig_ApprovalPolicies: what only the matcher can check is
// reported by brain config check (and at start-up) with the policy's key.
func TestCheckConfig_ApprovalPolicies(t *testing.T) {
	tests := []struct{ name, policies, want string }{
		{"bad glob", `[{name: a, tool: "[", auto_approve: true}]`, "approvals.policies[0].tool (line 4): bad glob"},
		{"bad path", `[{name: a, tool: t, auto_approve: true}, {name: b, tool: t, auto_approve: true, when: [{path: "$.a[", equals: 1}]}]`, "approvals.policies[1].when[0].path"},
		{"bad regexp", `[{name: a, tool: t, auto_approve: true, when: [{path: a, regexp: "("}]}]`, "approvals.policies[0].when[0] (line 4): regexp"},
		{"two tests", `[{name: a, tool: t, auto_approve: true, when: [{path: a, regexp: "x", equals: 1}]}]`, "approvals.policies[0].when[0] (line 4): set exactly one of equals, regexp, or gt/gte/lt/lte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadPolicies(t, "approvals:\n  policies: "+tt.policies+"\n")
			err := CheckConfig(cfg, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckConfig = %v; want %q", err, tt.want)
			}
		})
	}
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
	set, err := approvalPolicies(loadPolicies(t, block))
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
