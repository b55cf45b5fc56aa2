package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/policy"
	"brain/tools"
)

// prArgs is how the pull-request tool below reads its arguments: with Go's
// JSON decoding, which matches field names regardless of case, like
// tools/github does.
type prArgs struct {
	Repo string `json:"repo"`
	Base string `json:"base"`
}

// prTool is an approval tool whose preview records what it would act on.
type prTool struct {
	mu   sync.Mutex
	seen map[string]prArgs // by tool call id
}

func (p *prTool) def() tools.Definition {
	return tools.Definition{
		Name: "open_pr", Description: "Open a pull request",
		Input: json.RawMessage(`{"type":"object","required":["repo"],"properties":{
			"repo":{"type":"string"},"base":{"type":"string"},"title":{"type":"string"},
			"number":{"type":"integer"},"meta":{"type":"object"}}}`),
		FoldCase: []string{"$.repo"},
		Preview: func(_ context.Context, c tools.Call) (tools.Card, error) {
			var a prArgs
			if err := json.Unmarshal(c.Input, &a); err != nil {
				return tools.Card{}, err
			}
			p.mu.Lock()
			p.seen[c.ToolCallID] = a
			p.mu.Unlock()
			return tools.Card{Title: "PR on " + a.Repo + " into " + a.Base}, nil
		},
		Apply: func(context.Context, tools.Call, tools.Decision) (json.RawMessage, error) {
			return json.RawMessage(`{}`), nil
		},
	}
}

// The attack's shapes (issue 24, finding 1): arguments shaped so the tool
// acts on a value a policy names while the matcher sees something else.
// Each must either be refused as invalid input before anything is
// proposed, or meet the policy that names the value the tool acts on.
func TestEngine_PolicyShapesCannotDodgeAPolicy(t *testing.T) {
	pr := &prTool{seen: map[string]prArgs{}}
	h := newHarness(t, withTools(pr.def()), withPolicies(t,
		policy.ApprovalPolicy{Name: "no-main", Tool: "open_pr", Action: policy.PolicyDeny, Message: "never into main",
			When: []policy.PolicyCondition{{Path: "$.base", Equals: "main", HasEquals: true}}},
		policy.ApprovalPolicy{Name: "two-for-the-api", Tool: "open_pr", Action: policy.PolicyReview, Require: 2,
			When: []policy.PolicyCondition{{Path: "$.repo", Equals: "acme/api", HasEquals: true}}},
	))
	const refused, denied, review = "refused", "no-main", "two-for-the-api"
	shapes := []struct {
		name, input, want string
	}{
		{"plain", `{"repo":"acme/api","base":"dev"}`, review},
		{"plain into main", `{"repo":"acme/other","base":"main"}`, denied},
		{"large number beside", `{"repo":"acme/api","base":"dev","pad":1e400}`, refused},
		{"large number beside a deny", `{"repo":"acme/other","base":"main","pad":1e400}`, refused},
		{"negative large number", `{"repo":"acme/api","pad":-1e400}`, refused},
		{"large number nested", `{"repo":"acme/api","meta":{"deep":[1,{"x":1e400}]}}`, refused},
		{"large number in an array", `{"repo":"acme/other","base":"main","list":[1e999]}`, refused},
		{"integer past 2^53", `{"repo":"acme/api","number":9007199254740993}`, refused},
		{"other-case key", `{"repo":"acme/other","REPO":"acme/api"}`, refused},
		{"other-case key alone", `{"repo":"acme/other","Base":"main"}`, refused},
		{"other-case key nested", `{"repo":"acme/other","meta":{"Repo":"x","repo":"y"}}`, refused},
		{"long-s key", `{"repo":"acme/other","ba\u017fe":"main"}`, refused},
		{"kelvin key", `{"repo":"acme/other","meta":{"\u212aey":1,"key":2}}`, refused},
		{"other-case repo", `{"repo":"Acme/API","base":"dev"}`, review},
		{"upper-case repo", `{"repo":"ACME/API"}`, review},
		{"duplicate key, the last wins", `{"repo":"acme/other","base":"dev","base":"main"}`, refused},
		{"duplicate key, the first wins", `{"repo":"acme/api","repo":"acme/other"}`, refused},
		{"duplicate key nested", `{"repo":"acme/other","meta":{"a":1,"a":2}}`, refused},
	}
	var calls []fakemodel.Call
	for i, s := range shapes {
		calls = append(calls, fakemodel.Call{ID: fmt.Sprintf("c_%02d", i), Name: "open_pr", Input: s.input})
	}
	s := h.session()
	h.fake.Push(fakemodel.ToolCalls(calls...), fakemodel.Text("Proposed."))
	h.send(s.ID, "open the pull requests")
	_, evs := h.waitTurns(s.ID, 1)

	list, err := h.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	byCall := map[string]engine.Approval{}
	for _, a := range list {
		byCall[a.CallID] = a
	}
	byResult := map[string]engine.ToolCallResult{}
	for _, r := range results(t, evs) {
		byResult[r.CallID] = r
	}
	for i, sh := range shapes {
		id := callID(t, evs, fmt.Sprintf("c_%02d", i))
		res, a := byResult[id], byCall[id]
		text := ""
		if len(res.Result.Content) > 0 {
			text = res.Result.Content[0].Text
		}
		var got string
		switch {
		case a.ID != "" && a.Policy == review && a.Required == 2:
			got = review
		case a.ID != "":
			got = fmt.Sprintf("an approval under policy %q needing %d", a.Policy, a.Needed())
		case strings.Contains(text, `refused by policy "no-main"`):
			got = denied
		case res.Result.IsError && strings.Contains(text, "arguments refused"):
			got = refused
		default:
			got = "result " + text
		}
		if got != sh.want {
			t.Errorf("%s: %s: got %s, want %s", sh.name, sh.input, got, sh.want)
			continue
		}
		if got == review {
			// What the card shows, what is stored and what the tool
			// acts on are the one canonical value the policy saw.
			seen := pr.seen[id]
			var stored prArgs
			if err := json.Unmarshal(a.Input, &stored); err != nil || stored != seen || seen.Repo != "acme/api" ||
				!strings.Contains(a.Card.Title, "acme/api") {
				t.Errorf("%s: stored %s (%v), the tool saw %+v, card %q", sh.name, a.Input, err, seen, a.Card.Title)
			}
		}
		if got == refused && pr.seen[id] != (prArgs{}) {
			t.Errorf("%s: refused, but the preview ran with %+v", sh.name, pr.seen[id])
		}
	}
}
