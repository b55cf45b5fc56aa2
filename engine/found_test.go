package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/policy"
	"brain/tools"
)

// changeTool's preview finds the paths a change touches (they are not in
// its arguments) and pins a commit id that apply must get back.
type changeTool struct {
	mu    sync.Mutex
	found []map[string]string // what each apply was handed
}

func (c *changeTool) def() tools.Definition {
	return tools.Definition{
		Name: "propose_change", Description: "Propose a change",
		Input: json.RawMessage(`{"type":"object","required":["repo","paths"],"properties":{"repo":{"type":"string"},"paths":{"type":"string"}}}`),
		Preview: func(_ context.Context, call tools.Call) (tools.Card, error) {
			var in struct{ Repo, Paths string }
			if err := json.Unmarshal(call.Input, &in); err != nil {
				return tools.Card{}, err
			}
			return tools.Card{Title: "Change " + in.Repo, Detail: "diff --git a/x b/x",
				Found: map[string]string{"head": "c0ffee", "paths": strings.ReplaceAll(in.Paths, ",", "\n")}}, nil
		},
		Apply: func(_ context.Context, _ tools.Call, d tools.Decision) (json.RawMessage, error) {
			c.mu.Lock()
			c.found = append(c.found, d.Found)
			c.mu.Unlock()
			return json.RawMessage(`{}`), nil
		},
	}
}

// Policies test what the preview found at $.found: a change touching
// deploy/ needs two people, one touching secrets/ is refused; apply gets
// the card's Found back.
func TestEngine_PolicyOnWhatThePreviewFound(t *testing.T) {
	ct := &changeTool{}
	h := newHarness(t, withTools(ct.def()), withApprovers("ann", "bob"), withPolicies(t,
		policy.ApprovalPolicy{Name: "no-secrets", Tool: "propose_change", Action: policy.PolicyDeny, Message: "not secrets",
			When: []policy.PolicyCondition{{Path: "$.found.paths", Regexp: `(?m)^secrets/`}}},
		policy.ApprovalPolicy{Name: "two-for-deploy", Tool: "propose_change", Action: policy.PolicyReview, Require: 2,
			When: []policy.PolicyCondition{{Path: "$.found.paths", Regexp: `(?m)^deploy/`}}},
	))
	s := h.session()
	h.fake.Push(fakemodel.ToolCalls(
		fakemodel.Call{ID: "c_app", Name: "propose_change", Input: `{"repo":"acme/w","paths":"main.go,README.md"}`},
		fakemodel.Call{ID: "c_deploy", Name: "propose_change", Input: `{"repo":"acme/w","paths":"main.go,deploy/prod.yaml"}`},
		fakemodel.Call{ID: "c_secret", Name: "propose_change", Input: `{"repo":"acme/w","paths":"secrets/key"}`},
	), fakemodel.Text("Proposed."))
	h.send(s.ID, "change it")
	_, evs := h.waitTurns(s.ID, 1)
	rs := results(t, evs)
	if len(rs) != 3 || !rs[2].Result.IsError || !strings.Contains(rs[2].Result.Content[0].Text, `refused by policy "no-secrets"`) {
		t.Fatalf("results %+v", rs)
	}
	list, err := h.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: s.ID})
	if err != nil || len(list) != 2 {
		t.Fatalf("approvals %v %+v", err, list)
	}
	byCall := map[string]engine.Approval{}
	for _, a := range list {
		byCall[a.CallID] = a
	}
	app, deploy := byCall[callID(t, evs, "c_app")], byCall[callID(t, evs, "c_deploy")]
	if app.Policy != "" || app.Needed() != 1 || deploy.Policy != "two-for-deploy" || deploy.Needed() != 2 {
		t.Fatalf("app %q/%d, deploy %q/%d", app.Policy, app.Needed(), deploy.Policy, deploy.Needed())
	}
	if deploy.Card.Detail != "diff --git a/x b/x" || deploy.Card.Found["head"] != "c0ffee" {
		t.Fatalf("stored card %+v", deploy.Card)
	}
	for _, by := range []string{"ann", "bob"} {
		if _, err := h.eng.Decide(context.Background(), deploy.ID, engine.Decision{Approve: true, By: by}); err != nil {
			t.Fatal(err)
		}
	}
	waitApproval(t, h, deploy.ID, engine.ApprovalApplied)
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if len(ct.found) != 1 || ct.found[0]["head"] != "c0ffee" || ct.found[0]["paths"] != "main.go\ndeploy/prod.yaml" {
		t.Fatalf("apply was handed %v", ct.found)
	}
}
