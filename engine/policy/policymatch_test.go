package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func num(f float64) *float64 { return &f }

func TestSet_Match(t *testing.T) {
	set, err := CompilePolicies([]ApprovalPolicy{
		{Name: "no-p0", Tool: "create_ticket", Action: PolicyDeny, Message: "P0 goes to on-call",
			When: []PolicyCondition{{Path: "$.priority", Equals: "P0", HasEquals: true}}},
		{Name: "two-for-api", Tool: "github_create_pull_request", Action: PolicyReview, Require: 2, ForbidSelf: true,
			When: []PolicyCondition{{Path: "repo", Regexp: `^acme/api$`}}},
		{Name: "small-refunds", Tool: "issue_refund", Action: PolicyAutoApprove,
			When: []PolicyCondition{{Path: "$.amount", GT: num(0), LTE: num(50)}}},
		{Name: "first-label", Tool: "label", Action: PolicyAutoApprove,
			When: []PolicyCondition{{Path: `$.labels[1]["odd key"]`, Equals: true, HasEquals: true}}},
		{Name: "reads", Tool: "lookup_*", Action: PolicyAutoApprove},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, input, want string
	}{
		{"create_ticket", `{"priority":"P0"}`, "no-p0"},
		{"create_ticket", `{"priority":"P1"}`, ""},
		{"create_ticket", `{}`, ""},
		{"create_ticket", `not json`, "unreadable-arguments"},
		{"create_ticket", `{"priority":"P1","pad":1e400}`, "unreadable-arguments"},
		{"github_create_pull_request", `{"repo":"acme/api"}`, "two-for-api"},
		{"github_create_pull_request", `{"repo":"acme/api-old"}`, ""},
		{"github_create_pull_request", `{"repo":7}`, ""},
		{"issue_refund", `{"amount":50}`, "small-refunds"},
		{"issue_refund", `{"amount":50.5}`, ""},
		{"issue_refund", `{"amount":0}`, ""},
		{"issue_refund", `{"amount":"20"}`, ""},
		{"label", `{"labels":[{}, {"odd key": true}]}`, "first-label"},
		{"label", `{"labels":[{"odd key": true}]}`, ""},
		{"lookup_customer", `{}`, "reads"},
		{"lookup", `{}`, ""},
	}
	for _, tt := range tests {
		p, ok := set.Match(tt.tool, json.RawMessage(tt.input))
		if got := p.Name; got != tt.want || ok != (tt.want != "") {
			t.Errorf("Match(%s, %s) = %q, %v; want %q", tt.tool, tt.input, got, ok, tt.want)
		}
	}
}

// A path the tool compares ignoring case (tools.Definition.FoldCase) is
// compared so by equals and regexp; other paths stay exact.
func TestSet_MatchFoldCase(t *testing.T) {
	set, err := CompilePolicies([]ApprovalPolicy{
		{Name: "api", Tool: "pr", Action: PolicyDeny, Message: "no",
			When: []PolicyCondition{{Path: "$.repo", Equals: "Acme/API", HasEquals: true}}},
		{Name: "acme", Tool: "pr", Action: PolicyDeny, Message: "no",
			When: []PolicyCondition{{Path: "repo", Regexp: `^acme/`}}},
		{Name: "main", Tool: "pr", Action: PolicyDeny, Message: "no",
			When: []PolicyCondition{{Path: "$.base", Equals: "main", HasEquals: true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		input string
		fold  []string
		want  string
	}{
		{`{"repo":"acme/api"}`, []string{"$.repo"}, "api"},
		{`{"repo":"acme/api"}`, nil, "acme"},
		{`{"repo":"ACME/web"}`, []string{"$.repo"}, "acme"},
		{`{"repo":"ACME/web"}`, nil, ""},
		{`{"repo":"x/y","base":"MAIN"}`, []string{"$.repo"}, ""},
	}
	for _, tt := range tests {
		if p, _ := set.Match("pr", json.RawMessage(tt.input), tt.fold...); p.Name != tt.want {
			t.Errorf("Match(%s, fold %v) = %q, want %q", tt.input, tt.fold, p.Name, tt.want)
		}
	}
}

func TestSet_FirstMatchWins(t *testing.T) {
	set, err := CompilePolicies([]ApprovalPolicy{
		{Name: "a", Tool: "t*", Action: PolicyAutoApprove},
		{Name: "b", Tool: "tool", Action: PolicyDeny, Message: "no"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := set.Match("tool", nil); p.Name != "a" {
		t.Errorf("matched %q, want the first policy", p.Name)
	}
	var none *PolicySet
	if _, ok := none.Match("tool", nil); ok || none.Len() != 0 {
		t.Error("a nil set matched")
	}
}

func TestCompile_Errors(t *testing.T) {
	tests := []struct {
		p    ApprovalPolicy
		want string
	}{
		{ApprovalPolicy{Tool: "t", Action: PolicyAutoApprove}, "name: required"},
		{ApprovalPolicy{Name: "x", Action: PolicyAutoApprove}, "tool: required"},
		{ApprovalPolicy{Name: "x", Tool: "[", Action: PolicyAutoApprove}, "tool: bad glob"},
		{ApprovalPolicy{Name: "x", Tool: "t", Action: "maybe"}, "action:"},
		{ApprovalPolicy{Name: "x", Tool: "t", Action: PolicyDeny}, "message: required"},
		{ApprovalPolicy{Name: "x", Tool: "t", Action: PolicyReview}, "require: must be at least 1"},
		{ApprovalPolicy{Name: "x", Tool: "t", Action: PolicyAutoApprove, When: []PolicyCondition{{Path: "$.a"}}}, "when[0]: set exactly one"},
		{ApprovalPolicy{Name: "x", Tool: "t", Action: PolicyAutoApprove, When: []PolicyCondition{{Path: "$.a", Regexp: "("}}}, "when[0]: regexp"},
		{ApprovalPolicy{Name: "x", Tool: "t", Action: PolicyAutoApprove, When: []PolicyCondition{{Path: "$.a[", Regexp: "a"}}}, "when[0].path"},
		{ApprovalPolicy{Name: "x", Tool: "t", Action: PolicyAutoApprove, When: []PolicyCondition{{Path: "$.a", Equals: []any{}, HasEquals: true}}}, "equals:"},
	}
	for _, tt := range tests {
		_, err := CompilePolicies([]ApprovalPolicy{{Name: "ok", Tool: "t", Action: PolicyAutoApprove}, tt.p})
		if err == nil || !strings.Contains(err.Error(), "policies[1]") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CompilePolicies(%+v) = %v; want policies[1] ... %s", tt.p, err, tt.want)
		}
	}
}

func TestParsePath(t *testing.T) {
	for _, p := range []string{"$", "$.a", "a", "a.b", "$.a[0].b", `$["x y"]`, "[3]", "$.a-b_c"} {
		if _, err := parsePath(p); err != nil {
			t.Errorf("parsePath(%q): %v", p, err)
		}
	}
	for _, p := range []string{"", "$.", "$..a", "$.a[", "$.a[-1]", "$.a[x]", "$a", "$.a b", strings.Repeat(".a", 200)} {
		if _, err := parsePath(p); err == nil {
			t.Errorf("parsePath(%q) succeeded, want an error", p)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"$.a[0].b", `$["k"]`, "a.b", "$[", "$.a[99999999999999999999]"} {
		f.Add(s, `{"a":[{"b":1}],"k":2}`)
	}
	f.Fuzz(func(t *testing.T, p, doc string) {
		steps, err := parsePath(p)
		if err != nil {
			return
		}
		if len(steps) > maxPathSteps {
			t.Fatalf("%q: %d steps", p, len(steps))
		}
		var v any
		if json.Unmarshal([]byte(doc), &v) == nil {
			lookupPath(v, steps)
		}
	})
}

// BenchmarkPolicySet_Match is the cost a policy set adds to one approval
// tool call: the README's three examples plus two more, the call matching
// the last.
func BenchmarkPolicySet_Match(b *testing.B) {
	set, err := CompilePolicies([]ApprovalPolicy{
		{Name: "reads", Tool: "*_lookup", Action: PolicyAutoApprove},
		{Name: "two", Tool: "github_create_pull_request", Action: PolicyReview, Require: 2, When: []PolicyCondition{{Path: "$.repo", Equals: "acme/api", HasEquals: true}}},
		{Name: "p0", Tool: "create_ticket", Action: PolicyDeny, Message: "no", When: []PolicyCondition{{Path: "$.priority", Equals: "P0", HasEquals: true}}},
		{Name: "refunds", Tool: "issue_refund", Action: PolicyAutoApprove, When: []PolicyCondition{{Path: "$.amount", LTE: num(50)}}},
		{Name: "labels", Tool: "label", Action: PolicyDeny, Message: "no", When: []PolicyCondition{{Path: "$.labels[0]", Regexp: "^(?i)security$"}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	input := json.RawMessage(`{"issue":42,"labels":["Security","p1"],"note":"` + strings.Repeat("x", 200) + `"}`)
	b.ReportAllocs()
	for b.Loop() {
		if p, ok := set.Match("label", input); !ok || p.Name != "labels" {
			b.Fatal("no match")
		}
	}
}
