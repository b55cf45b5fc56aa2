package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/tools"
)

func testApproval() engine.Approval {
	return engine.Approval{
		ID:   "apr_1",
		Tool: "github_create_issue",
		Card: tools.Card{Title: "Create issue in acme/api", Facts: []tools.Fact{
			{Label: "Title", Value: "Fix <login> & logout"},
			{Label: "Body", Value: strings.Repeat("b", 3000)},
		}},
		RequestedBy: "U0OWNER",
		Status:      engine.ApprovalPending,
		ExpiresAt:   time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC),
	}
}

func TestPoster_ApprovalPending(t *testing.T) {
	p, fake := newPoster(t)
	a := testApproval()
	ts, err := p.PostApproval(testCtx(t), testChannel, testThread, a)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(testChannel, ts)
	bs := parseBlocks(t, m.Blocks)
	if bs[0].Type != "header" || bs[0].Text.Text != "Create issue in acme/api" || bs[0].Text.Type != "plain_text" {
		t.Errorf("header = %+v", bs[0])
	}
	if bs[1].Type != "section" || len(bs[1].Fields) != 2 {
		t.Fatalf("facts = %+v", bs[1])
	}
	if f := bs[1].Fields[0].Text; f != "*Title*\nFix &lt;login&gt; &amp; logout" {
		t.Errorf("fact = %q", f)
	}
	if n := len([]rune(bs[1].Fields[1].Text)); n > maxFieldText {
		t.Errorf("long fact has %d runes", n)
	}
	text := allText(t, m.Blocks)
	if !strings.Contains(text, "requested by <@U0OWNER>") ||
		!strings.Contains(text, fmt.Sprintf("expires <!date^%d^", a.ExpiresAt.Unix())) {
		t.Errorf("context = %q", text)
	}
	btns := buttons(t, m.Blocks)
	want := []button{
		{ActionID: ActionApprove, Value: `{"a":"apr_1"}`, Text: "Approve", Style: "primary"},
		{ActionID: ActionApproveComment, Value: `{"a":"apr_1"}`, Text: "Approve with comment"},
		{ActionID: ActionDenyReason, Value: `{"a":"apr_1"}`, Text: "Deny with reason"},
		{ActionID: ActionDeny, Value: `{"a":"apr_1"}`, Text: "Deny", Style: "danger"},
	}
	if len(btns) != len(want) {
		t.Fatalf("buttons = %+v", btns)
	}
	for i := range want {
		want[i].BlockID = btns[i].BlockID
		if btns[i] != want[i] {
			t.Errorf("button %d = %+v, want %+v", i, btns[i], want[i])
		}
	}
	if !strings.Contains(m.Text, "Create issue in acme/api") {
		t.Errorf("fallback text = %q", m.Text)
	}
}

func TestPoster_ApprovalStatuses(t *testing.T) {
	long := `"` + strings.Repeat("o", 900) + `"`
	tests := []struct {
		status  engine.ApprovalStatus
		by      string
		output  string
		errText string
		want    []string
		absent  []string
		buttons []string
	}{
		{engine.ApprovalApplying, "U0BOSS", "", "", []string{"approved by <@U0BOSS>, applying…"}, []string{"expires"}, nil},
		{engine.ApprovalApproved, "U0BOSS", "", "", []string{"approved by <@U0BOSS>, applying…"}, nil, nil},
		{engine.ApprovalApplied, "U0BOSS", `{"number":42,"url":"https://x.test/42"}`, "",
			[]string{"approved by <@U0BOSS> · applied", "```\n{\"number\":42,\"url\":\"https://x.test/42\"}\n```"}, nil, nil},
		{engine.ApprovalApplied, "api-key-ci", long, "", []string{"approved by api-key-ci · applied", strings.Repeat("o", 499) + "…\n```"}, []string{strings.Repeat("o", 500)}, nil},
		{engine.ApprovalFailed, "U0BOSS", "", "422 validation <failed>\nat line 3", []string{"apply failed: 422 validation &lt;failed&gt;"}, []string{"line 3"}, nil},
		{engine.ApprovalUnconfirmed, "U0BOSS", "", "connection reset after send", []string{"unconfirmed: connection reset after send"}, nil, []string{ActionRetry}},
		{engine.ApprovalDenied, "U0BOSS", "", "", []string{"denied by <@U0BOSS>"}, nil, nil},
		{engine.ApprovalExpired, "", "", "", []string{"expired", "expires <!date^"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.status)+"_"+tt.by, func(t *testing.T) {
			p, fake := newPoster(t)
			ctx := testCtx(t)
			a := testApproval()
			ts, err := p.PostApproval(ctx, testChannel, testThread, a)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := fake.Message(testChannel, ts)
			a.Status, a.DecidedBy, a.Error = tt.status, tt.by, tt.errText
			if tt.output != "" {
				a.Output = json.RawMessage(tt.output)
			}
			if err := p.UpdateApproval(ctx, testChannel, ts, a); err != nil {
				t.Fatal(err)
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
			if !strings.Contains(text, "Create issue in acme/api") || !strings.Contains(text, "requested by <@U0OWNER>") {
				t.Errorf("card lost its title or requester:\n%s", text)
			}
			var got []string
			for _, b := range buttons(t, m.Blocks) {
				got = append(got, b.ActionID)
				if v, err := DecodeValue(b.ActionID, b.Value); err != nil || v.Approval != "apr_1" {
					t.Errorf("button %s value %q: %+v, %v", b.ActionID, b.Value, v, err)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.buttons, ",") {
				t.Errorf("buttons = %v, want %v", got, tt.buttons)
			}
			old := blockIDs(t, before.Blocks)
			for id := range blockIDs(t, m.Blocks) {
				if old[id] {
					t.Errorf("block id %s reused", id)
				}
			}
		})
	}
}

func TestPoster_ApprovalManyFacts(t *testing.T) {
	p, fake := newPoster(t)
	a := testApproval()
	a.Card.Facts = nil
	for i := range 13 {
		a.Card.Facts = append(a.Card.Facts, tools.Fact{Label: fmt.Sprint("f", i), Value: "v"})
	}
	a.Card.Title = strings.Repeat("t", 200)
	ts, err := p.PostApproval(testCtx(t), testChannel, testThread, a)
	if err != nil {
		t.Fatal(err) // the fake rejects more than 10 fields or a header over 150
	}
	m, _ := fake.Message(testChannel, ts)
	var fields []int
	for _, b := range parseBlocks(t, m.Blocks) {
		if b.Type == "section" && len(b.Fields) > 0 {
			fields = append(fields, len(b.Fields))
		}
	}
	if fmt.Sprint(fields) != "[10 3]" {
		t.Errorf("fields per section = %v", fields)
	}
}

// TestPoster_ApprovalHostileStrings (issue 24, finding 8): a card whose
// title, facts, tool, policy, requester, comment and error are written to
// mention, broadcast or link shows them inert, pending and decided, in its
// blocks and in its notification text; only brain's own sequences (the
// date) are live.
func TestPoster_ApprovalHostileStrings(t *testing.T) {
	const hostile = "<@U123ABC> <!channel> <https://evil.example|click> &amp;"
	p, fake := newPoster(t)
	a := testApproval()
	a.Tool, a.Card.Title, a.RequestedBy = hostile, hostile, hostile
	a.Card.Facts = []tools.Fact{{Label: hostile, Value: hostile}}
	ts, err := p.PostApproval(testCtx(t), testChannel, testThread, a)
	if err != nil {
		t.Fatal(err)
	}
	a.Status, a.DecidedBy, a.Policy, a.Comment = engine.ApprovalFailed, hostile, hostile, hostile
	a.Error = hostile
	if err := p.UpdateApproval(testCtx(t), testChannel, ts, a); err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(testChannel, ts)
	for _, live := range slackfake.LiveSequences(m) {
		if !strings.HasPrefix(live, "<!date^") {
			t.Errorf("live sequence %q in %s\n%s", live, m.Text, m.Blocks)
		}
	}
	if m.Updates != 1 || !strings.Contains(m.Text, "&lt;!channel&gt;") {
		t.Errorf("text %q after %d updates", m.Text, m.Updates)
	}
}
