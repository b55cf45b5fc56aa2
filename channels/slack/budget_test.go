package slack

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"brain/engine"
	"brain/tools"
)

// TestPoster_CardWithManyLongFactsStaysWithinLimits: 25 facts of 2,500
// characters (20,000 after clipping, which Slack refuses as a whole) post
// as a card within 50 blocks and 12,000 characters; the facts left out are
// summarised with a link to the full card; decided, the card still fits.
func TestPoster_CardWithManyLongFactsStaysWithinLimits(t *testing.T) {
	p, fake := newPoster(t, WithPublicURL("https://brain.example/"))
	ctx := testCtx(t)
	var facts []tools.Fact
	for i := range 25 {
		facts = append(facts, tools.Fact{Label: fmt.Sprintf("Fact %d", i), Value: strings.Repeat("x", 2500)})
	}
	a := engine.Approval{ID: "apr_1", Tool: "deploy", Status: engine.ApprovalPending,
		Card: tools.Card{Title: "Deploy everything", Facts: facts}, RequestedBy: "U1"}
	ts, err := p.PostApproval(ctx, testChannel, testThread, a)
	if err != nil {
		t.Fatalf("PostApproval: %v", err)
	}
	m, _ := fake.Message(testChannel, ts)
	blocks := parseBlocks(t, m.Blocks)
	text := allText(t, m.Blocks)
	if len(blocks) > maxMessageBlocks || utf8.RuneCountInString(text) > maxMessageText {
		t.Fatalf("%d blocks, %d characters", len(blocks), utf8.RuneCountInString(text))
	}
	shown := strings.Count(text, "*Fact ")
	if shown == 0 || shown == 25 {
		t.Fatalf("%d facts shown", shown)
	}
	want := regexp.MustCompile(fmt.Sprintf(`\n%d more facts, \d{2},\d{3} characters · <https://brain\.example/v1/approvals/apr_1\|see the full card>\n`, 25-shown))
	if !want.MatchString(text) {
		t.Errorf("no overflow line %s in:\n%s", want, text[len(text)-300:])
	}
	if n := len(buttons(t, m.Blocks)); n != 4 { // Approve, with comment, Deny with reason, Deny
		t.Errorf("%d decision buttons survived, want all 4", n)
	}
	a.Status, a.DecidedBy = engine.ApprovalDenied, "U2"
	if err := p.UpdateApproval(ctx, testChannel, ts, a); err != nil {
		t.Fatalf("UpdateApproval: %v", err)
	}
}

// TestFitItems_AllFitWithoutOverflow: a card that fits shows every item
// and no overflow line; without a link the line has none.
func TestFitItems_AllFitWithoutOverflow(t *testing.T) {
	id := func(string) string { return "" }
	items := []*slack.TextBlockObject{mrkdwn("a"), mrkdwn("b")}
	out := fitItems(nil, items, 10, nil, id, "fact", "")
	if len(out) != 1 || blocksText(out) != 2 {
		t.Fatalf("blocks %+v", out)
	}
	var many []*slack.TextBlockObject
	for range 600 {
		many = append(many, mrkdwn("y"))
	}
	out = fitItems(nil, many, 10, nil, id, "fact", "")
	if len(out) != maxMessageBlocks || !withinLimits(out) {
		t.Fatalf("%d blocks", len(out))
	}
	last := out[len(out)-1].(*slack.ContextBlock).ContextElements.Elements[0].(*slack.TextBlockObject).Text
	if last != "110 more facts, 110 characters" {
		t.Errorf("overflow line %q", last)
	}
	if thousands(9200) != "9,200" || thousands(1234567) != "1,234,567" || thousands(12) != "12" {
		t.Error("thousands")
	}
}

// TestPoster_LongestQuestionWithinLimits: a question at its caps (4,000
// characters, 6 options of 80) is within the message limits.
func TestPoster_LongestQuestionWithinLimits(t *testing.T) {
	p, fake := newPoster(t)
	q := engine.Question{ID: "q1", Text: strings.Repeat("q", 4000)}
	for i := range 6 {
		q.Options = append(q.Options, engine.Option{Label: strings.Repeat("l", 80), Value: fmt.Sprint(i)})
	}
	ts, err := p.PostQuestion(testCtx(t), testChannel, testThread, q, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(testChannel, ts)
	if n := utf8.RuneCountInString(allText(t, m.Blocks)); n > maxMessageText {
		t.Errorf("%d characters", n)
	}
}

// withinLimits reports whether a message's blocks pass Block Kit's limits
// as a whole, for messages whose parts are bounded one by one.
func withinLimits(bs []slack.Block) bool {
	return len(bs) <= maxMessageBlocks && blocksText(bs) <= maxMessageText
}
