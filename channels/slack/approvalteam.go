package slack

import (
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"brain/engine"
)

// maxCommentText bounds the comment or reason a card quotes.
const maxCommentText = 1000

// decideButtons are a pending card's buttons: one click to approve or
// deny, or a form to add a comment or a reason.
func decideButtons(blockID, value string) *slack.ActionBlock {
	return slack.NewActionBlock(blockID,
		slack.NewButtonBlockElement(ActionApprove, value, plain("Approve")).WithStyle(slack.StylePrimary),
		slack.NewButtonBlockElement(ActionApproveComment, value, plain("Approve with comment")),
		slack.NewButtonBlockElement(ActionDenyReason, value, plain("Deny with reason")),
		slack.NewButtonBlockElement(ActionDeny, value, plain("Deny")).WithStyle(slack.StyleDanger))
}

// votesLine is the progress of an approval that needs several people:
// "1 of 2 approvals: @ann", and who may not approve; "" otherwise.
func votesLine(a engine.Approval) string {
	var parts []string
	if a.Needed() > 1 {
		line := strconv.Itoa(len(a.Votes)) + " of " + strconv.Itoa(a.Needed()) + " approvals"
		if len(a.Votes) > 0 {
			line += ": " + votersList(a.Votes)
		}
		parts = append(parts, line)
	}
	if a.ForbidSelf && a.RequestedBy != "" {
		parts = append(parts, "the requester may not approve")
	}
	if len(parts) > 0 && a.Policy != "" {
		parts = append(parts, "policy "+Escape(a.Policy))
	}
	return strings.Join(parts, " · ")
}

func votersList(votes []engine.Vote) string {
	names := make([]string, len(votes))
	for i, v := range votes {
		names[i] = person(v.By)
	}
	return strings.Join(names, ", ")
}

// decidedBy names who decided: every approver of an N-person approval.
func decidedBy(a engine.Approval) string {
	if len(a.Votes) > 1 && a.Status != engine.ApprovalDenied {
		names := make([]string, len(a.Votes))
		for i, v := range a.Votes {
			names[i] = person(v.By)
		}
		return strings.Join(names, " and ")
	}
	if a.DecidedBy == "" {
		return "someone"
	}
	return person(a.DecidedBy)
}

// appendComment quotes the decision's comment (or a deny's reason), and
// the comments of earlier approvers, under the outcome.
func appendComment(blocks []slack.Block, blockID string, a engine.Approval) []slack.Block {
	var lines []string
	for _, v := range a.Votes {
		if v.Comment != "" && (v.By != a.DecidedBy || a.Status == engine.ApprovalDenied) {
			lines = append(lines, person(v.By)+": "+quote(v.Comment))
		}
	}
	if a.Comment != "" {
		label := "Comment"
		if a.Status == engine.ApprovalDenied {
			label = "Reason"
		}
		lines = append(lines, "*"+label+"*: "+quote(a.Comment))
	}
	if len(lines) == 0 {
		return blocks
	}
	return append(blocks, section(blockID, clip(strings.Join(lines, "\n"), maxSection)))
}

func quote(s string) string {
	return Escape(truncate(strings.Join(strings.Fields(s), " "), maxCommentText))
}

// expiredLine says a card expired, and that nothing happened.
func expiredLine(a engine.Approval) string {
	if a.ExpiresAt.IsZero() {
		return "expired without a decision; nothing was applied"
	}
	return "expired " + slackDate(a.ExpiresAt) + " without a decision; nothing was applied"
}
