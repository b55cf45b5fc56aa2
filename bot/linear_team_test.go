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
