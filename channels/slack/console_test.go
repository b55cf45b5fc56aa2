package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/enginetest"
	"brain/store"
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

// TestRenderer_FinalReplyLinksToTheConsole: a final reply ends with an
// "open in brain" line linking to its session, above the feedback
// buttons; a reply followed by tool calls has neither, and without a
// console there is no link. A reply as long as a message holds still fits
// Block Kit's limits with the line (the fake refuses what Slack would).
func TestRenderer_FinalReplyLinksToTheConsole(t *testing.T) {
	const link = "<https://brain.example/sessions/ses_1|open in brain>"
	long := strings.Repeat("all work and no play ", maxMarkdown/len("all work and no play "))
	long = strings.TrimSpace(long + strings.Repeat("x", maxMarkdown-len(long)))
	for _, tc := range []struct {
		name  string
		opts  []Option
		final string
		link  bool
	}{
		{"with a console", []Option{WithConsoleURL("https://brain.example")}, "Done: the build is green.", true},
		{"a full-size reply", []Option{WithConsoleURL("https://brain.example")}, long, true},
		{"without a console", nil, "Done: the build is green.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, fake := newPoster(t, tc.opts...)
			evs := &enginetest.Events{}
			r := &Renderer{Engine: evs, Events: evs, Poster: p, Now: time.Now, Log: p.log,
				Store: &memPosted{cards: map[string]string{}, questions: map[string]store.PostedQuestion{}}}
			s := engine.Session{ID: "ses_1", Origin: engine.OriginSlack, ThreadKey: "slack:T1:" + testChannel + ":" + testThread}
			evs.Add(t,
				engine.TurnStarted{},
				engine.AgentMessage{Text: "Let me check the build."},
				engine.ToolCall{ID: "call_1", Name: "ci_status", Input: json.RawMessage(`{}`)},
				engine.AgentMessage{Text: tc.final},
				engine.TurnCompleted{Outcome: engine.OutcomeCompleted},
			)
			ctx := testCtx(t)
			evs.RenderAfter(t, 0, func(ev engine.Event) error { return r.Render(ctx, s, ev) })

			thread := fake.Thread(testChannel, testThread)
			if len(thread) < 2 {
				t.Fatalf("%d messages, want the two replies", len(thread))
			}
			first, last := thread[0], thread[len(thread)-1]
			if text := allText(t, first.Blocks); !strings.Contains(text, "Let me check the build.") || strings.Contains(text, "open in brain") ||
				strings.Contains(string(first.Blocks), "context_actions") {
				t.Fatalf("a reply followed by tool calls got a final reply's tail: %s", first.Blocks)
			}
			var posted strings.Builder
			for _, m := range thread[1:] {
				for _, b := range parseBlocks(t, m.Blocks) {
					if b.Type == "markdown" {
						posted.WriteString(b.Text.Text + " ")
					}
				}
			}
			if got, want := strings.Join(strings.Fields(posted.String()), " "), strings.Join(strings.Fields(tc.final), " "); got != want {
				t.Fatalf("the final reply posted %d characters, want %d", len(got), len(want))
			}
			bs := parseBlocks(t, last.Blocks)
			if n := len(bs); bs[n-1].Type != "context_actions" {
				t.Fatalf("the final reply does not end with the feedback buttons: %s", last.Blocks)
			}
			if got := strings.Contains(allText(t, last.Blocks), link); got != tc.link {
				t.Fatalf("console link under the final reply: %v, want %v: %s", got, tc.link, last.Blocks)
			}
			if tc.link && bs[len(bs)-2].Type != "context" {
				t.Fatalf("the link is not a context line above the buttons: %s", last.Blocks)
			}
		})
	}
}
