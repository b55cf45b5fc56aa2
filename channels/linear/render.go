package linear

import (
	"strings"
	"unicode"

	"brain/engine"
)

// Approval choices, the verbs of an approval option's value.
const (
	ApproveVerb = "approve"
	DenyVerb    = "deny"
	RetryVerb   = "retry"
)

// QuestionOptions renders q's options as select options.
func QuestionOptions(q engine.Question) []Option {
	out := make([]Option, 0, len(q.Options))
	for _, o := range q.Options {
		out = append(out, Option{Value: o.Value, Label: o.Label})
	}
	return out
}

// ApprovalBody renders an approval card as the Markdown body of an
// elicitation: the title in bold, then one line per fact.
func ApprovalBody(a engine.Approval) string {
	var b strings.Builder
	title := oneLine(a.Card.Title)
	if title == "" {
		title = a.Tool
	}
	b.WriteString("**Approval needed:** " + title)
	for _, f := range a.Card.Facts {
		b.WriteString("\n- **" + oneLine(f.Label) + ":** " + oneLine(f.Value))
	}
	b.WriteString("\n\nPick Approve or Deny." + replyHint)
	return b.String()
}

// ApprovalOptions are the two choices of an approval elicitation. Their
// values, "approve:<approval id>" and "deny:<approval id>", come back as
// the prompted body; ParseApprovalValue reads them.
func ApprovalOptions(a engine.Approval) []Option {
	return []Option{
		{Value: ApproveVerb + ":" + a.ID, Label: "Approve"},
		{Value: DenyVerb + ":" + a.ID, Label: "Deny"},
	}
}

// ParseApprovalValue reads a prompted body made by picking an
// ApprovalOptions choice: the approval id and whether it approves. ok is
// false for anything else (free text, a question's option).
func ParseApprovalValue(body string) (approvalID string, approve bool, ok bool) {
	verb, id, found := strings.Cut(strings.TrimSpace(body), ":")
	if !found || id == "" || strings.ContainsAny(id, " \t\n") {
		return "", false, false
	}
	switch verb {
	case ApproveVerb:
		return id, true, true
	case DenyVerb:
		return id, false, true
	}
	return "", false, false
}

// oneLine folds a card string onto one line so it cannot break the list.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// RetryOptions is the select offered after a turn stopped: picking it
// resumes the session with retry (ParseRetryValue reads the choice).
func RetryOptions(sessionID string) []Option {
	return []Option{{Value: RetryVerb + ":" + sessionID, Label: "Run again"}}
}

// replyHint tells how to decide with a comment or a reason, which the
// options cannot carry: a reply ParseApprovalReply reads.
const replyHint = ` Or reply "approve: your comment" or "deny: your reason" (the agent sees it).`

// ParseApprovalReply reads a typed reply that decides with a comment or
// a reason: "deny: too risky", "approve: go ahead" (the verb, a colon, the
// text), or "deny:apr_123 too risky" naming the approval. approvalID is
// "" when the reply names none: it answers the session's only pending
// approval. ok is false for anything else, so ordinary messages that begin
// with "deny" are never taken for a decision.
func ParseApprovalReply(body string) (approvalID string, approve bool, comment string, ok bool) {
	verb, rest, found := strings.Cut(strings.TrimSpace(body), ":")
	if !found {
		return "", false, "", false
	}
	switch strings.ToLower(verb) {
	case ApproveVerb:
		approve = true
	case DenyVerb:
	default:
		return "", false, "", false
	}
	if strings.HasPrefix(rest, "apr_") {
		id, text := rest, ""
		if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
			id, text = rest[:i], rest[i:]
		}
		return id, approve, strings.TrimSpace(text), true
	}
	return "", approve, strings.TrimSpace(rest), true
}

// ParseRetryValue reads a prompted body made by picking RetryOptions: the
// session to resume with retry. ok is false for anything else.
func ParseRetryValue(body string) (sessionID string, ok bool) {
	verb, id, found := strings.Cut(strings.TrimSpace(body), ":")
	if !found || verb != RetryVerb || id == "" || strings.ContainsAny(id, " \t\n") {
		return "", false
	}
	return id, true
}
