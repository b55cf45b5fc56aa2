package engine_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"brain/engine/policy"
	"brain/tools"
)

// FuzzCanonicalArgsMeetPolicies checks that no arguments a tool accepts can
// dodge a policy on the value the tool acts on: whatever the bytes, once
// they pass CanonicalInput and the schema, a policy naming each value the
// tool reads (decoding them its way, field names regardless of case; the
// repository written in another case, as GitHub compares it) matches.
func FuzzCanonicalArgsMeetPolicies(f *testing.F) {
	pr := &prTool{seen: map[string]prArgs{}}
	tool, err := tools.Compile(pr.def())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"repo":"acme/api","base":"main","number":7}`,
		`{"repo":"Acme/API","pad":1e400}`,
		`{"repo":"acme/other","REPO":"acme/api"}`,
		`{"repo":"acme/other","base":"dev","base":"main"}`,
		`{"repo":"acme/x","ba\u017fe":"main","number":9007199254740993}`,
		`{"repo":"acme/x","meta":{"deep":[1,{"x":-1e400}]},"number":1e2}`,
		`{"repo":"a/b","Number":3,"number":4}`,
		`{"repo":"a/b","base":"\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		canon, err := tool.CanonicalInput(raw)
		if err != nil || tool.ValidateInput(canon) != nil {
			return // refused as invalid input: nothing is proposed
		}
		again, err := tool.CanonicalInput(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("canonical form %s is not stable: %s, %v", canon, again, err)
		}
		// What the tool acts on, read its way.
		var acts struct {
			Repo   *string `json:"repo"`
			Base   *string `json:"base"`
			Number *int64  `json:"number"`
		}
		if json.Unmarshal(canon, &acts) != nil {
			return // the tool fails before acting
		}
		var when []policy.PolicyCondition
		if acts.Repo != nil {
			when = append(when, policy.PolicyCondition{Path: "$.repo", Equals: strings.ToUpper(*acts.Repo), HasEquals: true})
		}
		if acts.Base != nil {
			when = append(when, policy.PolicyCondition{Path: "$.base", Equals: *acts.Base, HasEquals: true})
		}
		if acts.Number != nil {
			n := float64(*acts.Number)
			when = append(when, policy.PolicyCondition{Path: "$.number", GTE: &n, LTE: &n})
		}
		set, err := policy.CompilePolicies([]policy.ApprovalPolicy{
			{Name: "names-the-values", Tool: "open_pr", Action: policy.PolicyDeny, Message: "no", When: when},
		})
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := set.Match("open_pr", canon, tool.FoldCase...); !ok || p.Name != "names-the-values" {
			t.Fatalf("arguments %q (canonical %s) dodge a policy on what the tool acts on (%+v): matched %q", raw, canon, when, p.Name)
		}
	})
}
