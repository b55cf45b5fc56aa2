package linear

import (
	"encoding/json"
	"strings"
	"testing"

	"brain/channels/linear/linearfake"
	"brain/engine"
	"brain/engine/enginetest"
	"brain/tools"
)

// TestRenderer_AppliedPullRequest: an applied approval whose output names
// a pull request attaches it to the session's issue and moves the issue
// to the review state; a state the team lacks, a session on no issue and
// an output without a pull request each attach or move nothing they
// should not, and say so.
func TestRenderer_AppliedPullRequest(t *testing.T) {
	pr := json.RawMessage(`{"created":true,"repo":"acme/widgets","number":7,"url":"https://github.com/acme/widgets/pull/7"}`)
	cases := []struct {
		name, review, output string
		onIssue              bool
		wantState            string
		wantAttached         bool
		wantNote             string
	}{
		{"moved by name", "in review", string(pr), true, "st-review", true, "Moved ENG-1 to In Review."},
		{"moved by id", "st-review", string(pr), true, "st-review", true, "Moved ENG-1 to In Review."},
		{"no such state", "QA", string(pr), true, "st-progress", true, `no workflow state "QA"`},
		{"no review state", "", string(pr), true, "st-progress", true, "Attached https://github.com/acme/widgets/pull/7 to ENG-1."},
		{"session on no issue", "In Review", string(pr), false, "st-progress", false, "Approval apr_1: applied."},
		{"not a pull request", "In Review", `{"url":"https://github.com/acme/widgets/issues/7"}`, true, "st-progress", false, "Approval apr_1: applied."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, fake := newClient(t)
			fake.AddTeam("team-1",
				linearfake.WorkflowState{ID: "st-progress", Name: "In Progress", Type: "started"},
				linearfake.WorkflowState{ID: "st-review", Name: "In Review", Type: "started", Position: 1})
			is := linearfake.Issue{ID: "i-1", Identifier: "ENG-1", StateID: "st-progress", StateType: "started", Team: "team-1"}
			if tc.onIssue {
				is.Sessions = []string{testSession}
			}
			fake.AddIssue(is)
			evs := &enginetest.Events{}
			evs.SetApproval(engine.Approval{ID: "apr_1", Tool: "github_propose_change", Card: tools.Card{Title: "Propose a pull request"}, Status: engine.ApprovalApplied})
			evs.Add(t, engine.ApplySucceeded{ApprovalID: "apr_1", Tool: "github_propose_change", Status: engine.ApprovalApplied, Output: json.RawMessage(tc.output)})
			r := &Renderer{Engine: evs, Client: c, Log: c.log, ReviewState: tc.review}
			s := engine.Session{ID: "ses_1", Origin: engine.OriginLinear, ThreadKey: "linear:" + testSession}
			ctx := testCtx(t)
			evs.RenderAfter(t, 0, func(ev engine.Event) error { return r.Render(ctx, s, ev) })
			acts := fake.Activities(testSession)
			if len(acts) != 1 || !strings.Contains(acts[0].Body, tc.wantNote) {
				t.Fatalf("activities %+v, want a thought with %q", acts, tc.wantNote)
			}
			if got, _ := fake.Issue("i-1"); got.StateID != tc.wantState {
				t.Fatalf("state %s, want %s", got.StateID, tc.wantState)
			}
			atts := fake.Attachments("i-1")
			if tc.wantAttached != (len(atts) == 1) || len(atts) > 1 {
				t.Fatalf("attachments %+v", atts)
			}
			if tc.wantAttached && (atts[0].Title != "Pull request acme/widgets#7" || atts[0].Subtitle != "Propose a pull request") {
				t.Fatalf("attachment %+v", atts[0])
			}
		})
	}
}
