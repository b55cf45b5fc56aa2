package bot

import (
	"strings"
	"testing"

	"brain/engine/model/fakemodel"
)

// TestLinear_DenyWithReasonByReply: a typed "deny: ..." reply answers the
// session's pending approval; the thought shows the reason and the next
// turn's request carries it.
func TestLinear_DenyWithReasonByReply(t *testing.T) {
	la := newLinearApp(t)
	la.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy"}), fakemodel.Text("Proposed the deploy."))
	la.event("created", sidA, "@brain deploy", "")
	el := la.waitActivity(sidA, "elicitation", "Deploy checkout")
	if !strings.Contains(el.Body, `"deny: your reason"`) {
		t.Errorf("the elicitation does not say how to give a reason: %s", el.Body)
	}
	la.waitActivity(sidA, "action", "Recorded for approval")
	la.fake.Push(fakemodel.Text("I will wait for the freeze to end."))
	la.event("prompted", sidA, "deny: the freeze is on until Monday", "")
	la.waitActivity(sidA, "thought", "Reason: the freeze is on until Monday")
	if la.applied.Load() != 0 {
		t.Fatal("a denied deploy was applied")
	}
	la.event("prompted", sidA, "what now?", "")
	la.waitActivity(sidA, "response", "I will wait for the freeze to end.")
	reqs := la.fake.Requests()
	if last := string(reqs[len(reqs)-1].Raw); !strings.Contains(last, `reason: \"the freeze is on until Monday\"`) {
		t.Fatalf("the next request lacks the reason: %s", last)
	}
	la.event("prompted", sidA, "approve: changed my mind", "")
	la.waitActivity(sidA, "thought", "No approval is waiting")
}

// TestLinear_AutoApprovedShowsNoChoice: a policy-approved call is shown as
// applied under the policy, with no Approve/Deny to pick.
func TestLinear_AutoApprovedShowsNoChoice(t *testing.T) {
	la := newLinearAppWith(t, "approvals: {policies: [{name: routine, tool: deploy, auto_approve: true}]}\n")
	la.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy"}), fakemodel.Text("Deploying."))
	la.event("created", sidA, "@brain deploy", "")
	la.waitActivity(sidA, "thought", "approved under policy routine")
	la.waitActivity(sidA, "response", "Deploying.")
	if la.applied.Load() != 1 {
		t.Fatalf("applied %d times", la.applied.Load())
	}
	for _, a := range la.linear.Activities(sidA) {
		if a.Type == "elicitation" {
			t.Fatalf("an elicitation for an auto-approved call: %s", a.Body)
		}
	}
}
