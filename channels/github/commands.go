package github

import (
	"strconv"
	"strings"

	"brain/engine"
)

// Command is a slash command read from a comment.
type Command struct {
	// Verb is "approve", "deny", "retry" or "stop".
	Verb string
	// ID is the approval's id or short id when the comment named one.
	ID string
	// Text is the approver's comment or the denial's reason.
	Text string
}

// ParseCommand reads a comment whose first line is a command: "/approve",
// "/approve [id] [comment]", "/deny [id] <reason>", "/retry [id]",
// "/stop". ok is false for anything else.
func ParseCommand(body string) (Command, bool) {
	body = strings.TrimSpace(body)
	if !strings.HasPrefix(body, "/") {
		return Command{}, false
	}
	fields := strings.Fields(body)
	verb := strings.ToLower(strings.TrimPrefix(fields[0], "/"))
	switch verb {
	case "approve", "deny", "retry", "stop":
	default:
		return Command{}, false
	}
	rest := strings.TrimSpace(strings.TrimPrefix(body, fields[0]))
	c := Command{Verb: verb}
	if len(fields) > 1 && looksLikeID(fields[1]) {
		c.ID = fields[1]
		rest = strings.TrimSpace(strings.TrimPrefix(rest, fields[1]))
	}
	c.Text = rest
	return c, true
}

// looksLikeID reports whether s is an approval id ("apr_…") or a short id
// (ShortID: 6 lowercase hex or base-32 characters after '#').
func looksLikeID(s string) bool {
	return strings.HasPrefix(s, "apr_") || (strings.HasPrefix(s, "#") && len(s) > 1 && len(s) <= 13)
}

// ShortID is the short form of an approval id people type: "#" and its
// last 6 characters.
func ShortID(id string) string {
	if len(id) > 6 {
		id = id[len(id)-6:]
	}
	return "#" + id
}

// MatchID reports whether a typed id names the approval id.
func MatchID(typed, id string) bool {
	return typed == id || typed == ShortID(id)
}

// AnswerFor reads a reply to an open question: a number picks that option
// (1-based), a label or value picks it, anything else is free text.
func AnswerFor(q engine.Question, text string) engine.Answer {
	text = strings.TrimSpace(text)
	a := engine.Answer{QuestionID: q.ID}
	if n, err := strconv.Atoi(strings.TrimSuffix(text, ".")); err == nil && n >= 1 && n <= len(q.Options) {
		a.Value = q.Options[n-1].Value
		return a
	}
	for _, o := range q.Options {
		if strings.EqualFold(text, o.Label) || text == o.Value {
			a.Value = o.Value
			return a
		}
	}
	a.Text = text
	return a
}
