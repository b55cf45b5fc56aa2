package slack

import (
	"strings"
	"testing"
)

func TestPoster_LinksToTheConsole(t *testing.T) {
	p, fake := newPoster(t, WithConsoleURL("https://brain.example"))
	ts, err := p.PostApproval(testCtx(t), testChannel, testThread, testApproval())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(testChannel, ts)
	if text := allText(t, m.Blocks); !strings.Contains(text, "<https://brain.example/approvals/apr_1|open in brain>") {
		t.Fatalf("approval card lacks the console link: %s", text)
	}
	ts, err = p.PostError(testCtx(t), testChannel, testThread, "model_timeout", "the model timed out", "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ = fake.Message(testChannel, ts)
	if text := allText(t, m.Blocks); !strings.Contains(text, "<https://brain.example/sessions/ses_1|see the session in brain>") {
		t.Fatalf("error notice lacks the console link: %s", text)
	}

	plain, fake2 := newPoster(t)
	ts, err = plain.PostApproval(testCtx(t), testChannel, testThread, testApproval())
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := fake2.Message(testChannel, ts); strings.Contains(allText(t, m.Blocks), "open in brain") {
		t.Fatal("a link without a console URL")
	}
}
