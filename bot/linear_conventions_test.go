package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"brain/channels/linear/linearfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools/plan"
)

func TestLinear_CreatedLinksGuidanceAndMovesToStarted(t *testing.T) {
	oa := newOAuthApp(t)
	oa.install("org-a")
	oa.linear.AddIssue(linearfake.Issue{ID: "i-1", Identifier: "ENG-1", Organization: "org-a", StateID: "st-todo", StateType: "unstarted",
		Started: []linearfake.State{{ID: "st-review", Position: 2}, {ID: "st-progress", Position: 1}}})
	oa.fake.Push(fakemodel.Text("On it."))
	guidance := []any{map[string]any{"body": "Always write tests first.", "origin": map[string]any{"__typename": "Team", "name": "Backend"}}}
	if st := oa.eventWith("org-a", "created", sidA, "@brain fix it", map[string]any{"guidance": guidance}); st != 200 {
		t.Fatalf("status %d", st)
	}
	oa.waitActivity(sidA, "response", "On it.")

	raw := string(oa.fake.Requests()[0].Raw)
	if !strings.Contains(raw, "Instructions from the Linear workspace") || !strings.Contains(raw, "Always write tests first.") || !strings.Contains(raw, "Fix checkout") {
		t.Fatalf("guidance and prompt context did not reach the model: %s", raw)
	}
	s, err := oa.app.store.SessionByThread(context.Background(), "linear:"+sidA)
	if err != nil {
		t.Fatal(err)
	}
	ups := oa.linear.SessionUpdates(sidA)
	if len(ups) == 0 || !strings.Contains(string(ups[0].Input), `"url":"`+oauthPublicURL+`/sessions/`+s.ID+`"`) {
		t.Fatalf("session updates %+v, want an external url to the brain session", ups)
	}
	is, _ := oa.linear.Issue("i-1")
	if is.StateID != "st-progress" || is.DelegateID != "app-a" {
		t.Fatalf("issue after delegation = %+v, want the first started state and the app as delegate", is)
	}
}

func TestLinear_StartedIssueStaysWhereItIs(t *testing.T) {
	oa := newOAuthApp(t)
	oa.install("org-a")
	oa.linear.AddIssue(linearfake.Issue{ID: "i-1", Identifier: "ENG-1", Organization: "org-a", StateID: "st-review", StateType: "started",
		DelegateID: "someone-else", Started: []linearfake.State{{ID: "st-progress", Position: 1}, {ID: "st-review", Position: 2}}})
	oa.fake.Push(fakemodel.Text("On it."))
	oa.event("org-a", "created", sidA, "@brain fix it")
	oa.waitActivity(sidA, "response", "On it.")
	if is, _ := oa.linear.Issue("i-1"); is.StateID != "st-review" || is.DelegateID != "someone-else" {
		t.Fatalf("issue = %+v, want it untouched", is)
	}
}

func TestLinear_ScheduleOutcomeCommentsOnceOnTheIssue(t *testing.T) {
	oa := newOAuthAppWith(t, `schedules:
  - name: nightly
    cron: "0 9 * * *"
    timezone: UTC
    prompt: Summarise the night.
    post_to: {linear_issue: ENG-9}
`)
	oa.install("org-a")
	oa.linear.AddIssue(linearfake.Issue{ID: "i-9", Identifier: "ENG-9", Organization: "org-a", StateType: "started"})
	oa.fake.Push(fakemodel.Text("All quiet."))
	if err := oa.app.Schedules().Tick(context.Background(), oa.clock.Now().Add(25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(oa.linear.Comments("i-9")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no outcome comment on ENG-9")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := oa.linear.Comments("i-9")[0]
	if !strings.Contains(c.Body, "nightly") || !strings.Contains(c.Body, "All quiet.") || !strings.Contains(c.Body, "scheduled run") {
		t.Fatalf("comment %+v", c)
	}
	if strings.Contains(oa.logs.String(), "this build does not run it yet") {
		t.Fatalf("post_to.linear_issue still warned about:\n%s", oa.logs.String())
	}
}

func TestLinear_PlanToolSetsTheSessionPlan(t *testing.T) {
	if plan.Name != engine.PlanTool {
		t.Fatalf("tools/plan names the tool %q, the engine records %q", plan.Name, engine.PlanTool)
	}
	oa := newOAuthAppWith(t, "    tools: [plan]\n")
	oa.install("org-a")
	oa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "plan", Input: `{"steps":[{"content":"Read the issue","status":"completed"},{"content":"Fix checkout","status":"inProgress"}]}`}),
		fakemodel.Text("Fixed."),
	)
	oa.event("org-a", "created", sidA, "@brain fix it")
	oa.waitActivity(sidA, "response", "Fixed.")
	var plans []string
	for _, u := range oa.linear.SessionUpdates(sidA) {
		if strings.Contains(string(u.Input), `"plan"`) {
			plans = append(plans, string(u.Input))
		}
	}
	if len(plans) != 1 || plans[0] != `{"plan":[{"content":"Read the issue","status":"completed"},{"content":"Fix checkout","status":"inProgress"}]}` {
		t.Fatalf("plan updates %q", plans)
	}
	s, _ := oa.app.store.SessionByThread(context.Background(), "linear:"+sidA)
	evs, _ := oa.app.engine.Events(context.Background(), s.ID, 0, 100)
	found := false
	for _, ev := range evs {
		if ev.Type == engine.EventPlanUpdated {
			p, err := ev.Decode()
			pu, ok := p.(engine.PlanUpdated)
			found = err == nil && ok && len(pu.Steps) == 2 && pu.Steps[1].Status == engine.PlanInProgress
		}
	}
	if !found {
		t.Fatalf("no plan.updated event in %+v", evs)
	}
}

func TestLinear_StaticTokenWarnsItIsNotRefreshed(t *testing.T) {
	la := newLinearApp(t)
	logs := la.logs.String()
	if !strings.Contains(logs, "linear.access_token is a static token and is never refreshed") {
		t.Fatalf("no start-up warning about the static token:\n%s", logs)
	}
	if strings.Contains(logs, linearToken) {
		t.Fatalf("the token is in the logs:\n%s", logs)
	}
}
