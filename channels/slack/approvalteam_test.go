package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"brain/engine"
)

func TestPoster_ApprovalTeamLines(t *testing.T) {
	at := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		change func(a *engine.Approval)
		want   []string
		absent []string
	}{
		{"one of two", func(a *engine.Approval) {
			a.Required, a.Policy = 2, "two-for-api"
			a.Votes = []engine.Vote{{By: "U0ANN", At: at}}
		}, []string{"1 of 2 approvals: <@U0ANN>", "policy two-for-api"}, nil},
		{"forbid self", func(a *engine.Approval) { a.ForbidSelf, a.Policy = true, "four-eyes" },
			[]string{"the requester may not approve · policy four-eyes"}, []string{"approvals"}},
		{"approved with comment", func(a *engine.Approval) {
			a.Status, a.DecidedBy, a.Comment = engine.ApprovalApplied, "U0BOSS", "ship it, <watch> the graphs"
		}, []string{"approved by <@U0BOSS> · applied", "*Comment*: ship it, &lt;watch&gt; the graphs"}, nil},
		{"denied with reason", func(a *engine.Approval) {
			a.Status, a.DecidedBy, a.Comment = engine.ApprovalDenied, "U0BOSS", "not during the freeze"
		}, []string{"denied by <@U0BOSS>", "*Reason*: not during the freeze"}, nil},
		{"two approvers", func(a *engine.Approval) {
			a.Status, a.DecidedBy, a.Required = engine.ApprovalApplied, "U0BOB", 2
			a.Votes = []engine.Vote{{By: "U0ANN", Comment: "fine"}, {By: "U0BOB", Comment: "ok"}}
			a.Comment = "ok"
		}, []string{"approved by <@U0ANN> and <@U0BOB> · applied", "<@U0ANN>: fine", "*Comment*: ok"}, []string{"<@U0BOB>: ok"}},
		{"auto-approved", func(a *engine.Approval) {
			a.Status, a.Policy, a.DecidedBy = engine.ApprovalApplied, "reads", "policy:reads"
		}, []string{"applied under policy reads"}, []string{"approved by"}},
		{"expired", func(a *engine.Approval) { a.Status = engine.ApprovalExpired },
			[]string{"expired <!date^", "without a decision; nothing was applied"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, fake := newPoster(t)
			a := testApproval()
			tt.change(&a)
			ts, err := p.PostApproval(testCtx(t), testChannel, testThread, a)
			if err != nil {
				t.Fatal(err) // the fake rejects blocks Slack would
			}
			m, _ := fake.Message(testChannel, ts)
			text := allText(t, m.Blocks)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("card lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(text, w) {
					t.Errorf("card has %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestPoster_OpenDecisionForm(t *testing.T) {
	p, fake := newPoster(t)
	a := testApproval()
	for _, approve := range []bool{true, false} {
		f := DecisionForm{Approval: a.ID, Approve: approve, Channel: testChannel, ThreadTS: testThread}
		if err := p.OpenDecisionForm(testCtx(t), "trig.1", a, f); err != nil {
			t.Fatal(err) // the fake checks the modal as views.open does
		}
	}
	views := fake.Views()
	if len(views) != 2 {
		t.Fatalf("%d views", len(views))
	}
	for i, v := range views {
		if v.CallbackID != CallbackDecision || v.TriggerID != "trig.1" {
			t.Errorf("view %d: %+v", i, v)
		}
		f, err := ParseDecisionForm(v.PrivateMetadata)
		if err != nil || f.Approval != a.ID || f.Approve != (i == 0) || f.Channel != testChannel || f.ThreadTS != testThread {
			t.Errorf("view %d metadata %+v, %v", i, f, err)
		}
		var blocks []struct {
			Type     string `json:"type"`
			BlockID  string `json:"block_id"`
			Optional bool   `json:"optional"`
			Element  struct {
				ActionID  string `json:"action_id"`
				MaxLength int    `json:"max_length"`
			} `json:"element"`
		}
		if err := json.Unmarshal(v.Blocks, &blocks); err != nil {
			t.Fatal(err)
		}
		in := blocks[len(blocks)-1]
		if in.Type != "input" || in.BlockID+"."+in.Element.ActionID != CommentField || in.Optional != (i == 0) || in.Element.MaxLength != engine.MaxComment {
			t.Errorf("view %d input %+v; want the comment field, optional only to approve", i, in)
		}
	}
	if v := views[0]; v.Title != "Approve" || views[1].Title != "Deny" {
		t.Errorf("titles %q, %q", views[0].Title, views[1].Title)
	}
	fake.Fail("views.open", 1, "expired_trigger_id")
	if err := p.OpenDecisionForm(testCtx(t), "trig.2", a, DecisionForm{Approval: a.ID}); err == nil || !strings.Contains(err.Error(), "expired_trigger_id") {
		t.Errorf("an expired trigger: %v", err)
	}
	if _, err := ParseDecisionForm(`{"ok":true}`); err == nil {
		t.Error("a form without an approval parsed")
	}
}
