package config

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

const policiesYAML = `
models: {default: {provider: fake}}
agents: [{name: default}]
approvals:
  ttl: 24h
  remind_before: 2h
  notify: {slack_channel: C0APPROVERS, dm_approvers: true}
  policies:
    - name: reads
      tool: "lookup_*"
      auto_approve: true
    - name: two-for-api
      tool: github_create_pull_request
      when: [{path: $.repo, equals: acme/api}]
      require: 2
      forbid_self: true
    - name: no-p0
      tool: create_ticket
      when: [{path: priority, equals: "P0"}]
      deny: true
      message: P0 tickets are filed by on-call
    - name: small
      tool: refund
      when: [{path: $.amount, gt: 0, lte: 50}, {path: $.currency, regexp: "^(EUR|USD)$"}, {path: $.test, equals: false}]
      auto_approve: true
`

func TestLoad_ApprovalPolicies(t *testing.T) {
	c := mustLoadYAML(t, policiesYAML, nil)
	if c.Approvals.RemindBefore.Std().Hours() != 2 || c.Approvals.Notify.SlackChannel != "C0APPROVERS" || !c.Approvals.Notify.DMApprovers {
		t.Fatalf("approvals = %+v", c.Approvals)
	}
	set, err := c.Approvals.PolicySet()
	if err != nil || set.Len() != 4 {
		t.Fatalf("PolicySet: %v, %d", err, set.Len())
	}
	tests := []struct{ tool, input, want string }{
		{"lookup_customer", `{}`, "reads"},
		{"github_create_pull_request", `{"repo":"acme/api"}`, "two-for-api"},
		{"github_create_pull_request", `{"repo":"acme/web"}`, ""},
		{"create_ticket", `{"priority":"P0"}`, "no-p0"},
		{"refund", `{"amount":20,"currency":"EUR","test":false}`, "small"},
		{"refund", `{"amount":20,"currency":"GBP","test":false}`, ""},
		{"refund", `{"amount":20,"currency":"EUR","test":"false"}`, ""},
	}
	for _, tt := range tests {
		p, _ := set.Match(tt.tool, json.RawMessage(tt.input))
		if p.Name != tt.want {
			t.Errorf("Match(%s, %s) = %q, want %q", tt.tool, tt.input, p.Name, tt.want)
		}
	}
	if p, _ := set.Match("github_create_pull_request", json.RawMessage(`{"repo":"acme/api"}`)); p.Require != 2 || !p.ForbidSelf {
		t.Errorf("review policy %+v", p)
	}
}

func TestValidate_ApprovalPolicies(t *testing.T) {
	tests := []struct {
		name, policies, want string
	}{
		{"no action", `[{name: a, tool: t}]`, "approvals.policies[0]: set exactly one action"},
		{"two actions", `[{name: a, tool: t, auto_approve: true, deny: true, message: m}]`, "approvals.policies[0]: set exactly one action"},
		{"no name", `[{tool: t, auto_approve: true}]`, "approvals.policies[0].name: required"},
		{"no tool", `[{name: a, auto_approve: true}]`, "approvals.policies[0].tool: required"},
		{"bad glob", `[{name: a, tool: "[", auto_approve: true}]`, "approvals.policies[0].tool: bad glob"},
		{"deny without message", `[{name: a, tool: t, deny: true}]`, "approvals.policies[0].message: required with deny"},
		{"message without deny", `[{name: a, tool: t, auto_approve: true, message: m}]`, "approvals.policies[0].message: only a deny policy"},
		{"negative require", `[{name: a, tool: t, require: -1}]`, "approvals.policies[0].require: must be at least 1"},
		{"bad path", `[{name: a, tool: t, auto_approve: true}, {name: b, tool: t, auto_approve: true, when: [{path: "$.a[", equals: 1}]}]`, "approvals.policies[1].when[0].path:"},
		{"bad regexp", `[{name: a, tool: t, auto_approve: true, when: [{path: a, regexp: "("}]}]`, "approvals.policies[0].when[0]: regexp"},
		{"two tests", `[{name: a, tool: t, auto_approve: true, when: [{path: a, regexp: "x", equals: 1}]}]`, "approvals.policies[0].when[0]: set exactly one"},
		{"duplicate", `[{name: a, tool: t, auto_approve: true}, {name: a, tool: u, auto_approve: true}]`, "approvals.policies[1].name: \"a\" is also the name of approvals.policies[0]"},
		{"list equals", `[{name: a, tool: t, auto_approve: true, when: [{path: a, equals: [1]}]}]`, "line 4: want a string, number, boolean or null"},
		{"unknown key", `[{name: a, tool: t, auto_approve: true, always: true}]`, "approvals.policies[0].always: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, "models: {default: {provider: fake}}\nagents: [{name: default}]\napprovals:\n  policies: "+tt.policies+"\n", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load = %v; want %q", err, tt.want)
			}
		})
	}
	for _, bad := range []struct{ yaml, want string }{
		{"remind_before: 200h", "approvals.remind_before: must be shorter than approvals.ttl"},
		{"notify: {slack_channel: general}", `approvals.notify.slack_channel: "general" is not a Slack channel id`},
	} {
		_, err := loadYAML(t, "models: {default: {provider: fake}}\nagents: [{name: default}]\napprovals:\n  "+bad.yaml+"\n", nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Load(%s) = %v; want %q", bad.yaml, err, bad.want)
		}
	}
}

// TestREADME_PolicyExamples loads the README's worked examples as written,
// so the documentation cannot drift from what brain accepts.
func TestREADME_PolicyExamples(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "Three worked examples:\n\n```yaml\n")
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("the README has no worked policy examples")
	}
	c := mustLoadYAML(t, "models: {default: {provider: fake}}\nagents: [{name: default}]\n"+block, nil)
	set, err := c.Approvals.PolicySet()
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
}
