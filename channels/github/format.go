package github

import (
	"fmt"
	"net/url"
	"strings"

	"brain/engine"
)

// MaxComment is GitHub's comment body limit (characters); replies longer
// than a comment continue in the next.
const MaxComment = 65536

// chunkSize leaves room under MaxComment for the continuation marks.
const chunkSize = MaxComment - 512

// Split cuts body into comments of at most chunkSize runes each, at a
// line end when one is near.
func Split(body string) []string {
	r := []rune(body)
	var out []string
	for len(r) > chunkSize {
		cut := chunkSize
		for i := chunkSize; i > chunkSize-2000; i-- {
			if r[i-1] == '\n' {
				cut = i
				break
			}
		}
		out = append(out, string(r[:cut]))
		r = r[cut:]
	}
	return append(out, string(r))
}

// replyBody is a turn's reply comment: its text, then its tool steps in a
// collapsed block.
func replyBody(text string, steps []string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(text))
	if len(steps) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "<details><summary>Tool steps (%d)</summary>\n\n", len(steps))
		for _, s := range steps {
			b.WriteString("- " + s + "\n")
		}
		b.WriteString("\n</details>")
	}
	if b.Len() == 0 {
		return "…"
	}
	return b.String()
}

// QuestionBody is a question as a comment: the text, the options as a
// numbered list and how to answer.
func QuestionBody(q engine.Question) string {
	var b strings.Builder
	b.WriteString("**Question:** " + q.Text + "\n")
	for i, o := range q.Options {
		fmt.Fprintf(&b, "\n%d. %s", i+1, oneLine(o.Label))
	}
	if len(q.Options) > 0 {
		b.WriteString("\n\nReply with the number, the option, or your own answer.")
	} else {
		b.WriteString("\nReply with your answer.")
	}
	return b.String()
}

// CardBody is an approval card as a comment: the title, the facts as a
// table, the exact arguments collapsed, the commands to decide and notes
// (votes, decision, outcome) below. consoleURL links the console's page
// ("" none).
func CardBody(a engine.Approval, consoleURL string, notes []string) string {
	var b strings.Builder
	title := oneLine(a.Card.Title)
	if title == "" {
		title = a.Tool
	}
	fmt.Fprintf(&b, "**Approval needed** `%s`: %s\n", ShortID(a.ID), cell(title))
	if len(a.Card.Facts) > 0 {
		b.WriteString("\n| | |\n| --- | --- |\n")
		for _, f := range a.Card.Facts {
			b.WriteString("| " + cell(f.Label) + " | " + cell(f.Value) + " |\n")
		}
	}
	fence := "```"
	for strings.Contains(string(a.Input), fence) {
		fence += "`"
	}
	fmt.Fprintf(&b, "\n<details><summary>Exact arguments of %s</summary>\n\n%sjson\n%s\n%s\n\n</details>\n", cell(a.Tool), fence, string(a.Input), fence)
	if a.Status == engine.ApprovalPending {
		fmt.Fprintf(&b, "\nReply `/approve %[1]s` (optionally with a comment) or `/deny %[1]s <reason>`.", ShortID(a.ID))
	}
	if consoleURL != "" {
		b.WriteString(" [Open in brain](" + consoleURL + "/approvals/" + url.PathEscape(a.ID) + ")")
	}
	for _, n := range notes {
		b.WriteString("\n\n> " + oneLine(n))
	}
	return b.String()
}

// cell keeps text inside one table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", "\\|")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
