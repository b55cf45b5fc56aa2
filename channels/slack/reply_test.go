package slack

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPoster_ReplySplitsInOrder(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	var paras []string
	for i := range 5 {
		paras = append(paras, fmt.Sprintf("**Part %d** %s", i, strings.Repeat("word ", 1000)))
	}
	paras = append(paras, "```\n"+strings.Repeat("code line\n", 1600)+"```")
	tss, err := p.Reply(ctx, testChannel, testThread, strings.Join(paras, "\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := fake.Thread(testChannel, testThread)
	if len(tss) < 4 || len(msgs) != len(tss) {
		t.Fatalf("got %d ts and %d messages, want the same number and at least 4", len(tss), len(msgs))
	}
	var joined strings.Builder
	for i, m := range msgs {
		if m.TS != tss[i] || m.ThreadTS != testThread {
			t.Errorf("message %d: ts %s thread %s, want %s in %s", i, m.TS, m.ThreadTS, tss[i], testThread)
		}
		if i > 0 && m.TS <= msgs[i-1].TS {
			t.Errorf("ts not increasing: %s after %s", m.TS, msgs[i-1].TS)
		}
		text := allText(t, m.Blocks)
		if utf8.RuneCountInString(text) > maxMarkdown || m.Text != truncate(Mrkdwn(text), maxSection) {
			t.Errorf("message %d: markdown %d runes, fallback text %d runes", i, utf8.RuneCountInString(text), utf8.RuneCountInString(m.Text))
		}
		if strings.Count(text, "```")%2 != 0 {
			t.Errorf("message %d has an unclosed code block", i)
		}
		joined.WriteString(text)
	}
	for i := range 5 {
		if !strings.Contains(joined.String(), fmt.Sprintf("**Part %d**", i)) {
			t.Errorf("part %d missing or converted (the markdown block takes Markdown as is)", i)
		}
	}
	if strings.Index(joined.String(), "**Part 1**") > strings.Index(joined.String(), "**Part 4**") {
		t.Error("parts out of order")
	}
}

func TestPoster_ReplyShortAndEmpty(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	tss, err := p.Reply(ctx, testChannel, "", "Hello **there** & [docs](https://x.test)")
	if err != nil || len(tss) != 1 {
		t.Fatalf("Reply = %v, %v", tss, err)
	}
	m, ok := fake.Message(testChannel, tss[0])
	if !ok || m.ThreadTS != "" || m.Text != "Hello *there* &amp; <https://x.test|docs>" {
		t.Errorf("message = %+v", m)
	}
	if got := allText(t, m.Blocks); got != "Hello **there** & [docs](https://x.test)" {
		t.Errorf("markdown block = %q, want the Markdown as written", got)
	}
	tss, err = p.Reply(ctx, testChannel, testThread, " \n ")
	if err != nil || tss != nil {
		t.Errorf("empty Reply = %v, %v", tss, err)
	}
	if n := len(fake.Calls("chat.postMessage")); n != 1 {
		t.Errorf("%d posts, want 1", n)
	}
}

func TestPoster_PostError(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	msg := "model unavailable <retrying>\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:12"
	ts, err := p.PostError(ctx, testChannel, testThread, "model_error", msg, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(testChannel, ts)
	text := allText(t, m.Blocks)
	if !strings.Contains(text, "`model_error`") || !strings.Contains(text, "model unavailable &lt;retrying&gt;") {
		t.Errorf("text = %q", text)
	}
	if strings.Contains(text, "goroutine") || strings.Contains(m.Text, "main.go") {
		t.Errorf("stack trace shown: %q", text)
	}
	bs := buttons(t, m.Blocks)
	if len(bs) != 1 || bs[0].ActionID != ActionResume || bs[0].Text != "Resume" {
		t.Fatalf("buttons = %+v", bs)
	}
	v, err := DecodeValue(bs[0].ActionID, bs[0].Value)
	if err != nil || v != (ButtonValue{Session: "ses_1"}) {
		t.Errorf("DecodeValue = %+v, %v", v, err)
	}

	ts, err = p.PostError(ctx, testChannel, testThread, "internal", "internal error", "")
	if err != nil {
		t.Fatal(err)
	}
	m, _ = fake.Message(testChannel, ts)
	if bs := buttons(t, m.Blocks); len(bs) != 0 {
		t.Errorf("no session, buttons = %+v", bs)
	}
}

func TestPoster_Ephemeral(t *testing.T) {
	p, fake := newPoster(t)
	if err := p.Ephemeral(testCtx(t), testChannel, "U0OTHER", testThread, "Only <@U0OWNER> can answer."); err != nil {
		t.Fatal(err)
	}
	eph := fake.Ephemerals()
	if len(eph) != 1 || eph[0].User != "U0OTHER" || eph[0].ThreadTS != testThread || eph[0].Text != "Only <@U0OWNER> can answer." {
		t.Errorf("ephemerals = %+v", eph)
	}
	if len(fake.Messages(testChannel)) != 0 {
		t.Error("an ephemeral became a message")
	}
}

// TestPoster_ReplyWithoutMarkdownBlock: a workspace that refuses the
// markdown block gets the reply in mrkdwn sections, and is not asked again.
func TestPoster_ReplyWithoutMarkdownBlock(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	fake.Fail("chat.postMessage", 1, "invalid_blocks")
	for range 2 {
		tss, err := p.Reply(ctx, testChannel, testThread, "Hello **there**")
		if err != nil || len(tss) != 1 {
			t.Fatalf("Reply = %v, %v", tss, err)
		}
		m, _ := fake.Message(testChannel, tss[0])
		if got := allText(t, m.Blocks); got != "Hello *there*" {
			t.Errorf("section text %q, want mrkdwn", got)
		}
	}
	if n := len(fake.Calls("chat.postMessage")); n != 3 {
		t.Errorf("%d posts, want 3 (the refused one, then one per reply)", n)
	}
}
