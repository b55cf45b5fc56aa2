package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func num(f float64) *float64 { return &f }

func TestSet_Match(t *testing.T) {
	set, err := Compile([]Policy{
		{Name: "no-p0", Tool: "create_ticket", Action: Deny, Message: "P0 goes to on-call",
			When: []Condition{{Path: "$.priority", Equals: "P0", HasEquals: true}}},
		{Name: "two-for-api", Tool: "github_create_pull_request", Action: Review, Require: 2, ForbidSelf: true,
			When: []Condition{{Path: "repo", Regexp: `^acme/api$`}}},
		{Name: "small-refunds", Tool: "issue_refund", Action: AutoApprove,
			When: []Condition{{Path: "$.amount", GT: num(0), LTE: num(50)}}},
		{Name: "first-label", Tool: "label", Action: AutoApprove,
			When: []Condition{{Path: `$.labels[1]["odd key"]`, Equals: true, HasEquals: true}}},
		{Name: "reads", Tool: "lookup_*", Action: AutoApprove},
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
		{"create_ticket", `not json`, ""},
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

func TestSet_FirstMatchWins(t *testing.T) {
	set, err := Compile([]Policy{
		{Name: "a", Tool: "t*", Action: AutoApprove},
		{Name: "b", Tool: "tool", Action: Deny, Message: "no"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := set.Match("tool", nil); p.Name != "a" {
		t.Errorf("matched %q, want the first policy", p.Name)
	}
	var none *Set
	if _, ok := none.Match("tool", nil); ok || none.Len() != 0 {
		t.Error("a nil set matched")
	}
}

func TestCompile_Errors(t *testing.T) {
	tests := []struct {
		p    Policy
		want string
	}{
		{Policy{Tool: "t", Action: AutoApprove}, "name: required"},
		{Policy{Name: "x", Action: AutoApprove}, "tool: required"},
		{Policy{Name: "x", Tool: "[", Action: AutoApprove}, "tool: bad glob"},
		{Policy{Name: "x", Tool: "t", Action: "maybe"}, "action:"},
		{Policy{Name: "x", Tool: "t", Action: Deny}, "message: required"},
		{Policy{Name: "x", Tool: "t", Action: Review}, "require: must be at least 1"},
		{Policy{Name: "x", Tool: "t", Action: AutoApprove, When: []Condition{{Path: "$.a"}}}, "when[0]: set exactly one"},
		{Policy{Name: "x", Tool: "t", Action: AutoApprove, When: []Condition{{Path: "$.a", Regexp: "("}}}, "when[0]: regexp"},
		{Policy{Name: "x", Tool: "t", Action: AutoApprove, When: []Condition{{Path: "$.a[", Regexp: "a"}}}, "when[0].path"},
		{Policy{Name: "x", Tool: "t", Action: AutoApprove, When: []Condition{{Path: "$.a", Equals: []any{}, HasEquals: true}}}, "equals:"},
	}
	for _, tt := range tests {
		_, err := Compile([]Policy{{Name: "ok", Tool: "t", Action: AutoApprove}, tt.p})
		if err == nil || !strings.Contains(err.Error(), "policies[1]") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%+v) = %v; want policies[1] ... %s", tt.p, err, tt.want)
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
			lookup(v, steps)
		}
	})
}
