package slack

import (
	"regexp"
	"strconv"
	"strings"
)

// Markdown constructs the converter understands, line by line.
var (
	reFence   = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	reHeading = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	reRule    = regexp.MustCompile(`^ {0,3}([-*_])([ \t]*([-*_])){2,}[ \t]*$`)
	reBullet  = regexp.MustCompile(`^([ \t]*)[-*+][ \t]+(.*)$`)
	reQuote   = regexp.MustCompile(`^ {0,3}>[ \t]?(.*)$`)
)

// Inline constructs.
var (
	reLink     = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	reAutolink = regexp.MustCompile(`<((?:https?://|mailto:)[^>\s]+)>`)
	// Slack references the model may write on purpose: user mentions and
	// channel links. Broadcasts (<!here>, <!channel>) are escaped on purpose.
	reMention = regexp.MustCompile(`<(?:@[UW][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^<>]*)?)>`)
	reStrike  = regexp.MustCompile(`~~([^~]+?)~~`)
	reBold    = regexp.MustCompile(`\*\*([^*]+?)\*\*|__([^_]+?)__`)
	reItalic  = regexp.MustCompile(`(^|[^\pL\pN*\\])\*([^*\s](?:[^*]*[^*\s])?)\*`)
)

// Private-use runes mark protected spans while a line is rewritten.
const (
	tokOpen  = "\uE000"
	tokClose = "\uE001"
	boldMark = "\uE002"
)

var reToken = regexp.MustCompile(tokOpen + `(\d+)` + tokClose)

// escaper escapes the three characters Slack reads as control sequences.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Escape escapes &, < and > for Slack mrkdwn text. It is the one escape
// for a person's or the model's string in brain's own mrkdwn (file names,
// card titles, facts, reasons, comments, policy and tool names): Slack reads
// <@U…>, <!channel> and <url|text> only from a literal "<", so escaped text
// can neither mention, broadcast nor disguise a link.
func Escape(s string) string { return escaper.Replace(s) }

// Literal quotes a person's or the model's string for the Markdown brain
// posts through Reply (a markdown block, or Mrkdwn's conversion where the
// block is refused): as a code span, one line, fenced by a backtick run
// longer than any inside it. A markdown block shows a code span's content
// as is, whereas outside code a Markdown [text](url) is a link and what
// the block makes of Slack's <…> sequences is not documented; Mrkdwn escapes code spans with Escape, so the
// notification text and the mrkdwn fallback stay inert too.
func Literal(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// Mrkdwn converts the Markdown a model writes into Slack mrkdwn: bold,
// italic, strike, links, headings (as bold lines), bullets (as •) and
// quotes; code blocks and inline code keep their content. &, < and > are
// escaped everywhere except in the link syntax, code included: Slack reads
// control sequences before formatting, so a raw "<!channel>" in a code block
// would still ping, and it shows &lt; in code as "<".
func Mrkdwn(md string) string {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	fence := "" // the opening marker while inside a code block
	for _, line := range lines {
		if fence != "" {
			if m := reFence.FindStringSubmatch(line); m != nil && m[1][0] == fence[0] &&
				len(m[1]) >= len(fence) && strings.TrimSpace(line[len(m[0]):]) == "" {
				out = append(out, "```")
				fence = ""
				continue
			}
			out = append(out, Escape(line))
			continue
		}
		if m := reFence.FindStringSubmatch(line); m != nil {
			rest := line[len(m[0]):]
			if m[1][0] == '`' && strings.Contains(rest, "`") {
				// Not a fence (CommonMark): a line such as ```x```.
				out = append(out, convertLine(line))
				continue
			}
			fence = m[1] // the info string (language) is dropped: Slack would print it
			out = append(out, "```")
			continue
		}
		out = append(out, convertLine(line))
	}
	if fence != "" {
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}

// convertLine converts one line outside code blocks.
func convertLine(line string) string {
	if m := reHeading.FindStringSubmatch(line); m != nil {
		text := strings.NewReplacer("**", "", "__", "").Replace(m[1])
		if strings.TrimSpace(text) == "" {
			return ""
		}
		return "*" + inline(text) + "*"
	}
	if reRule.MatchString(line) {
		return "──────────"
	}
	if m := reBullet.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + inline(m[2])
	}
	if m := reQuote.FindStringSubmatch(line); m != nil {
		return "> " + convertLine(m[1])
	}
	return inline(line)
}

// inline converts a line's text, keeping code spans as they are.
func inline(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(prose(s))
			break
		}
		n := runLen(s[i:], '`')
		j := closingRun(s[i+n:], n)
		if j < 0 {
			// No closing run: the backticks are literal text.
			b.WriteString(prose(s[:i+n]))
			s = s[i+n:]
			continue
		}
		b.WriteString(prose(s[:i]))
		code := s[i+n : i+n+j]
		if n > 1 && len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' {
			code = code[1 : len(code)-1]
		}
		b.WriteString("`" + Escape(code) + "`")
		s = s[i+n+j+n:]
	}
	return b.String()
}

func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingRun finds a run of exactly n backticks in s.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		k := runLen(s[i:], '`')
		if k == n {
			return i
		}
		i += k
	}
	return -1
}

// prose converts text outside code spans.
func prose(s string) string {
	var toks []string
	protect := func(t string) string {
		toks = append(toks, t)
		return tokOpen + strconv.Itoa(len(toks)-1) + tokClose
	}
	s = reLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := reLink.FindStringSubmatch(m)
		label, url := strings.NewReplacer("**", "", "__", "", "`", "").Replace(sub[1]), sub[2]
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "mailto:") {
			return protect(Escape(label)) // a relative link cannot be followed from Slack
		}
		url = Escape(strings.ReplaceAll(url, "|", "%7C"))
		if label == "" || label == sub[2] {
			return protect("<" + url + ">")
		}
		return protect("<" + url + "|" + Escape(label) + ">")
	})
	s = reAutolink.ReplaceAllStringFunc(s, func(m string) string {
		return protect("<" + Escape(m[1:len(m)-1]) + ">")
	})
	s = reMention.ReplaceAllStringFunc(s, protect)
	s = Escape(s)
	s = reStrike.ReplaceAllString(s, "~$1~")
	s = reBold.ReplaceAllString(s, boldMark+"$1$2"+boldMark)
	s = reItalic.ReplaceAllString(s, "${1}_${2}_")
	s = strings.ReplaceAll(s, boldMark, "*")
	return reToken.ReplaceAllStringFunc(s, func(m string) string {
		i, _ := strconv.Atoi(m[len(tokOpen) : len(m)-len(tokClose)])
		return toks[i]
	})
}
