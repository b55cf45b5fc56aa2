package config

import (
	"strings"
	"testing"
)

const policiesYAML = `
models: {default: {provider: fake}}
agents: [{name: default}]
approvals:
  ttl: 24h
  remind_before: 2h
  approvers: [U1, U2]
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
	ps := c.Approvals.Policies
	if len(ps) != 4 || !ps[0].AutoApprove || ps[1].Require != 2 || !ps[1].ForbidSelf || !ps[2].Deny || ps[2].Message == "" {
		t.Fatalf("policies %+v", ps)
	}
	if e := ps[2].When[0].Equals; e == nil || e.Value != "P0" {
		t.Errorf("quoted equals %+v, want the string P0", e)
	}
	small := ps[3].When
	if *small[0].GT != 0 || *small[0].LTE != 50 || small[1].Regexp != "^(EUR|USD)$" || small[2].Equals.Value != false {
		t.Errorf("conditions %+v", small)
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
		{"deny without message", `[{name: a, tool: t, deny: true}]`, "approvals.policies[0].message: required with deny"},
		{"negative require", `[{name: a, tool: t, require: -1}]`, "approvals.policies[0].require: must be at least 1"},
		{"message without deny", `[{name: a, tool: t, auto_approve: true, message: m}]`, "approvals.policies[0].message: only a deny policy"},
		{"duplicate", `[{name: a, tool: t, auto_approve: true}, {name: a, tool: u, auto_approve: true}]`, "approvals.policies[1].name: \"a\" is also the name of approvals.policies[0]"},
		{"list equals", `[{name: a, tool: t, auto_approve: true, when: [{path: a, equals: [1]}]}]`, "line 4: want a string, number, boolean or null"},
		{"require without approvers", `[{name: a, tool: t, require: 2}]`, "approvals.policies[0].require: needs 2 distinct approvers, but none are configured"},
		{"forbid_self without approvers", `[{name: a, tool: t, forbid_self: true}]`, "approvals.policies[0].forbid_self: needs approvals.approvers"},
		{"unknown key", `[{name: a, tool: t, auto_approve: true, always: true}]`, "approvals.policies[0].always: unknown key"},
		// What only the engine's matcher can check, with the key and line.
		{"bad glob", `[{name: a, tool: "[", auto_approve: true}]`, "approvals.policies[0].tool (line 4): bad glob"},
		{"bad path", `[{name: a, tool: t, auto_approve: true}, {name: b, tool: t, auto_approve: true, when: [{path: "$.a[", equals: 1}]}]`, "approvals.policies[1].when[0].path"},
		{"bad regexp", `[{name: a, tool: t, auto_approve: true, when: [{path: a, regexp: "("}]}]`, "approvals.policies[0].when[0] (line 4): regexp"},
		{"two tests", `[{name: a, tool: t, auto_approve: true, when: [{path: a, regexp: "x", equals: 1}]}]`, "approvals.policies[0].when[0] (line 4): set exactly one of equals, regexp, or gt/gte/lt/lte"},
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
