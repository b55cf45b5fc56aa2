package slackfake

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Slack's live sequences: in mrkdwn a "<…>" (mention, broadcast, link); in
// a markdown block also a Markdown link or image outside code.
var (
	reAngle   = regexp.MustCompile(`<[^<>]*>`)
	reMdLink  = regexp.MustCompile(`\[[^\]]*\]\([^)]*\)`)
	reCodeRun = regexp.MustCompile("`+")
)

// LiveSequences returns every sequence of m that Slack would render as a
// mention, broadcast or link: "<…>" in its text and in the mrkdwn of its
// blocks (sections, fields, context), and "<…>" or "[text](url)" outside
// code spans and fences in its markdown blocks. A test posts hostile
// strings and checks none of them comes back live.
func LiveSequences(m Message) []string {
	live := reAngle.FindAllString(m.Text, -1)
	var blocks []block
	_ = json.Unmarshal(m.Blocks, &blocks)
	for _, b := range blocks {
		if !b.decode() {
			continue
		}
		if b.Type == "markdown" {
			prose := outsideCode(b.Markdown)
			live = append(live, reAngle.FindAllString(prose, -1)...)
			live = append(live, reMdLink.FindAllString(prose, -1)...)
			continue
		}
		texts := append([]textObject(nil), b.Fields...)
		if b.Text != nil {
			texts = append(texts, *b.Text)
		}
		var elems []textObject
		if b.Type == "context" && json.Unmarshal(b.Elements, &elems) == nil {
			texts = append(texts, elems...)
		}
		for _, t := range texts {
			if t.Type == "mrkdwn" {
				live = append(live, reAngle.FindAllString(t.Text, -1)...)
			}
		}
	}
	return live
}

// outsideCode is Markdown with its code spans and fenced blocks removed
// (CommonMark: a span closes at the next run of as many backticks).
func outsideCode(md string) string {
	var b strings.Builder
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for line != "" {
			loc := reCodeRun.FindStringIndex(line)
			if loc == nil {
				b.WriteString(line)
				break
			}
			b.WriteString(line[:loc[0]])
			run := line[loc[0]:loc[1]]
			rest := line[loc[1]:]
			end := closing(rest, len(run))
			if end < 0 {
				b.WriteString(run)
				line = rest
				continue
			}
			line = rest[end+len(run):]
		}
		b.WriteString("\n")
	}
	return b.String()
}

// closing finds a run of exactly n backticks in s, -1 without one.
func closing(s string, n int) int {
	for _, loc := range reCodeRun.FindAllStringIndex(s, -1) {
		if loc[1]-loc[0] == n {
			return loc[0]
		}
	}
	return -1
}
