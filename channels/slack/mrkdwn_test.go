package slack

import (
	"strings"
	"testing"
	"unicode/utf8"

	"brain/channels/slack/slackfake"
)

func TestMrkdwn(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bold", "a **bold** word", "a *bold* word"},
		{"bold underscores", "__bold__", "*bold*"},
		{"italic star", "an *italic* word", "an _italic_ word"},
		{"italic underscore", "an _italic_ word", "an _italic_ word"},
		{"bold and italic", "**b** and *i*", "*b* and _i_"},
		{"multiplication", "2 * 3 * 4", "2 * 3 * 4"},
		{"strike", "~~gone~~", "~gone~"},
		{"link", "see [the docs](https://x.test/a?b=1&c=2)", "see <https://x.test/a?b=1&amp;c=2|the docs>"},
		{"link label escaped", "[a <b>](https://x.test)", "<https://x.test|a &lt;b&gt;>"},
		{"link bare label", "[https://x.test](https://x.test)", "<https://x.test>"},
		{"relative link", "[file](./a.go)", "file"},
		{"image", "![chart](https://x.test/c.png)", "<https://x.test/c.png|chart>"},
		{"autolink", "<https://x.test/p>", "<https://x.test/p>"},
		{"heading", "# Title", "*Title*"},
		{"heading level 3 with bold", "### The **plan** ##", "*The plan*"},
		{"bullets", "- one\n* two\n+ three", "• one\n• two\n• three"},
		{"nested bullet", "  - inner **b**", "  • inner *b*"},
		{"numbered list kept", "1. first", "1. first"},
		{"escape", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"broadcast escaped", "<!channel> hi", "&lt;!channel&gt; hi"},
		{"mention kept", "ask <@U123ABC>", "ask <@U123ABC>"},
		{"channel kept", "in <#C123|general>", "in <#C123|general>"},
		{"inline code untouched", "run `a **b** [x](y)` now", "run `a **b** [x](y)` now"},
		{"inline code escaped", "`a<b>`", "`a&lt;b&gt;`"},
		{"double backtick code", "``a ` b``", "`a ` b`"},
		{"unclosed backtick", "a ` b **c**", "a ` b *c*"},
		{"code block", "```go\nx := **y** // [a](b)\n- z\n```", "```\nx := **y** // [a](b)\n- z\n```"},
		{"code block escaped", "```\nif a < b {}\n```", "```\nif a &lt; b {}\n```"},
		{"tilde fence", "~~~\n# not a heading\n~~~", "```\n# not a heading\n```"},
		{"unclosed fence", "```\ncode", "```\ncode\n```"},
		{"one-line triple backticks", "```x```", "`x`"},
		{"quote", "> **quoted**", "> *quoted*"},
		{"rule", "---", "──────────"},
		{"crlf", "a\r\nb", "a\nb"},
		{"paragraphs", "one\n\ntwo", "one\n\ntwo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Mrkdwn(tt.in); got != tt.want {
				t.Errorf("Mrkdwn(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	para := func(c string, n int) string { return strings.Repeat(c, n) }
	code := "```\n" + strings.Repeat("line of code\n", 40) + "```"
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string // nil: only check invariants
	}{
		{"short", "hello", 100, []string{"hello"}},
		{"empty", "  \n ", 100, nil},
		{"paragraphs", para("a", 40) + "\n\n" + para("b", 40) + "\n\n" + para("c", 40), 100,
			[]string{para("a", 40) + "\n\n" + para("b", 40), para("c", 40)}},
		{"lines", para("a", 60) + "\n" + para("b", 60), 100, []string{para("a", 60), para("b", 60)}},
		{"before code block", para("a", 60) + "\n\n```\nx\ny\n```", 70, []string{para("a", 60), "```\nx\ny\n```"}},
		{"words", strings.Repeat("word ", 50), 100, nil},
		{"long code block", "intro\n\n" + code + "\n\noutro", 120, nil},
		{"no spaces", para("x", 350), 100, nil},
		{"link kept whole", para("a ", 40) + "<https://x.test/" + para("p", 30) + "|label>", 100, nil},
		{"multibyte", strings.Repeat("é ", 200), 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := split(tt.in, tt.limit)
			if tt.want != nil && strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("split\n got %q\nwant %q", got, tt.want)
			}
			for i, part := range got {
				if n := utf8.RuneCountInString(part); n > tt.limit || n == 0 {
					t.Errorf("part %d has %d runes (limit %d)", i, n, tt.limit)
				}
				if n := strings.Count(part, "```"); n%2 != 0 {
					t.Errorf("part %d has unbalanced fences: %q", i, part)
				}
				if strings.Count(part, "<") != strings.Count(part, ">") {
					t.Errorf("part %d cuts a link: %q", i, part)
				}
			}
			// Nothing is lost: the parts hold every non-space character
			// (plus the fences added around cuts in code).
			strip := func(s string) string {
				return strings.Join(strings.Fields(strings.ReplaceAll(s, "```", "")), "")
			}
			if strip(strings.Join(got, "")) != strip(tt.in) {
				t.Errorf("content changed:\n got %q\nwant %q", strip(strings.Join(got, "")), strip(tt.in))
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("abcdef", 4); got != "abc…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("ééé", 3); got != "ééé" {
		t.Errorf("truncate = %q", got)
	}
	if n := utf8.RuneCountInString(truncate(strings.Repeat("é", 100), 75)); n != 75 {
		t.Errorf("truncate to 75 gives %d runes", n)
	}
}

// TestLiteral_Inert (issue 24, finding 8): a hostile string quoted with
// Literal reaches Slack inert in a markdown block, in its notification
// text and in the mrkdwn sections of a workspace refusing markdown
// blocks, and Mrkdwn shows it whole.
func TestLiteral_Inert(t *testing.T) {
	hostile := []string{"<@U123ABC>", "<https://evil.example|click>", "<!channel>", "&amp;<!here>",
		"[click](https://evil.example)", "a`<!everyone>`b", "x``<@U9ZZZ>``", "two\nlines <!here>", ""}
	for _, refuse := range []bool{false, true} {
		p, fake := newPoster(t)
		if refuse {
			fake.Fail("chat.postMessage", 1, "invalid_blocks")
		}
		var lines []string
		for _, h := range hostile {
			lines = append(lines, "- could not read "+Literal(h)+" here")
		}
		if _, err := p.Reply(testCtx(t), testChannel, testThread, strings.Join(lines, "\n")); err != nil {
			t.Fatal(err)
		}
		ms := fake.Messages(testChannel)
		m := ms[len(ms)-1]
		if live := slackfake.LiveSequences(m); len(live) != 0 {
			t.Errorf("markdown refused %v: live %q in %s %s", refuse, live, m.Text, m.Blocks)
		}
		for _, w := range []string{"&lt;@U123ABC&gt;", "&lt;https://evil.example|click&gt;", "&amp;amp;&lt;!here&gt;", "two lines &lt;!here&gt;"} {
			if !strings.Contains(m.Text, w) {
				t.Errorf("markdown refused %v: text lacks %q: %s", refuse, w, m.Text)
			}
		}
	}
}
