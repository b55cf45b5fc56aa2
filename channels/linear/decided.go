package linear

import (
	"fmt"
	"strings"

	"brain/engine"
)

// decidedText is the thought for a decision: who decided (every approver
// of an N-person rule, or the policy), and the comment or reason.
func decidedText(d engine.ApprovalDecided) string {
	verb := "Approved"
	if d.Denied() {
		verb = "Denied"
	}
	by := d.By
	if len(d.Approvals) > 1 && !d.Denied() {
		names := make([]string, len(d.Approvals))
		for i, v := range d.Approvals {
			names[i] = v.By
		}
		by = strings.Join(names, " and ")
	}
	if d.ByPolicy() {
		return fmt.Sprintf("Approved under policy %s; applying.", d.Policy)
	}
	label := "Comment"
	if d.Denied() {
		label = "Reason"
	}
	return fmt.Sprintf("%s by %s.%s", verb, by, commentSuffix(label, d.Comment))
}

func commentSuffix(label, comment string) string {
	if comment == "" {
		return ""
	}
	return fmt.Sprintf(" %s: %s", label, clipText(oneLine(comment), 500))
}

// decidedBody shows an approval that was decided before it was shown.
func decidedBody(a engine.Approval) string {
	title := oneLine(a.Card.Title)
	if title == "" {
		title = a.Tool
	}
	if a.ByPolicy() {
		return fmt.Sprintf("**%s**: approved under policy %s.", title, a.Policy)
	}
	return fmt.Sprintf("**%s**: %s.", title, a.Status)
}
