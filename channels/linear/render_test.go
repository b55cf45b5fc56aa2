package linear

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"brain/engine"
	"brain/tools"
)

func TestQuestionOptions(t *testing.T) {
	q := engine.Question{ID: "q1", Text: "Which?", Options: []engine.Option{{Label: "Frontend", Value: "fe"}, {Label: "", Value: "be"}}}
	want := []Option{{Value: "fe", Label: "Frontend"}, {Value: "be"}}
	if got := QuestionOptions(q); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if got := QuestionOptions(engine.Question{}); len(got) != 0 {
		t.Fatalf("got %+v", got)
	}
}

func TestApprovalBody(t *testing.T) {
	a := engine.Approval{ID: "appr_1", Tool: "create_ticket", Card: tools.Card{
		Title: "Create ticket\nNew  login",
		Facts: []tools.Fact{{Label: "Title", Value: "Login\nbroken"}, {Label: "Team", Value: "ENG"}},
	}}
	want := "**Approval needed:** Create ticket New login\n- **Title:** Login broken\n- **Team:** ENG\n\nPick Approve or Deny." + replyHint
	if got := ApprovalBody(a); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got := ApprovalBody(engine.Approval{Tool: "t"}); got != "**Approval needed:** t\n\nPick Approve or Deny."+replyHint {
		t.Fatalf("got %q", got)
	}
}

func TestApprovalOptionsRoundTrip(t *testing.T) {
	opts := ApprovalOptions(engine.Approval{ID: "appr_1"})
	if len(opts) != 2 || opts[0].Label != "Approve" || opts[1].Label != "Deny" {
		t.Fatalf("options %+v", opts)
	}
	for i, o := range opts {
		id, approve, ok := ParseApprovalValue(o.Value)
		if !ok || id != "appr_1" || approve != (i == 0) {
			t.Fatalf("%q -> %q %v %v", o.Value, id, approve, ok)
		}
	}
	for _, body := range []string{"", "approve", "approve:", "yes:appr_1", "approve:a b", "please approve it"} {
		if _, _, ok := ParseApprovalValue(body); ok {
			t.Errorf("ParseApprovalValue(%q) ok", body)
		}
	}
	if id, approve, ok := ParseApprovalValue("  deny:appr_9 \n"); !ok || approve || id != "appr_9" {
		t.Fatalf("%q %v %v", id, approve, ok)
	}
}

// An approval renders into an elicitation Linear accepts.
func TestClient_ApprovalElicitation(t *testing.T) {
	c, fake := newClient(t)
	a := engine.Approval{ID: "appr_1", Tool: "create_ticket", Card: tools.Card{Title: "Create ticket", Facts: []tools.Fact{{Label: "Title", Value: "x"}}}}
	if err := c.Elicitation(testCtx(t), testSession, ActivityID(testSession, a.ID), ApprovalBody(a), ApprovalOptions(a)); err != nil {
		t.Fatal(err)
	}
	acts := fake.Activities(testSession)
	if len(acts) != 1 || acts[0].Signal != "select" || acts[0].Type != "elicitation" {
		t.Fatalf("activities %+v", acts)
	}
	jsonEqual(t, acts[0].SignalMetadata, `{"options":[{"value":"approve:appr_1","label":"Approve"},{"value":"deny:appr_1","label":"Deny"}]}`)
}

func TestParseApprovalReply(t *testing.T) {
	tests := []struct {
		body, id, comment string
		approve, ok       bool
	}{
		{"deny: too risky", "", "too risky", false, true},
		{"  Approve:go ahead ", "", "go ahead", true, true},
		{"deny:apr_12 not now", "apr_12", "not now", false, true},
		{"approve:apr_12", "apr_12", "", true, true},
		{"deny access for bob", "", "", false, false},
		{"maybe: later", "", "", false, false},
		{"", "", "", false, false},
	}
	for _, tt := range tests {
		id, approve, comment, ok := ParseApprovalReply(tt.body)
		if id != tt.id || approve != tt.approve || comment != tt.comment || ok != tt.ok {
			t.Errorf("ParseApprovalReply(%q) = %q, %v, %q, %v", tt.body, id, approve, comment, ok)
		}
	}
}

func FuzzParseApprovalReply(f *testing.F) {
	for _, s := range []string{"deny: too risky", "approve:apr_1 ok", "Deny:", "approve", "deny:apr_ x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		id, _, comment, ok := ParseApprovalReply(body)
		if !ok {
			if id != "" || comment != "" {
				t.Fatalf("%q: not a decision, yet %q %q", body, id, comment)
			}
			return
		}
		if strings.IndexFunc(id, unicode.IsSpace) >= 0 || (id != "" && !strings.HasPrefix(id, "apr_")) || comment != strings.TrimSpace(comment) {
			t.Fatalf("%q: id %q comment %q", body, id, comment)
		}
	})
}
