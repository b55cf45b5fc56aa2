package slackbridge

import (
	"context"
	"errors"

	"brain/channels/slack"
	"brain/engine"
	"brain/tools"
	"brain/webhooks/slackhook"
)

// openDecisionForm answers "Approve with comment" and "Deny with reason":
// the form opens only for someone who may decide, on a pending approval,
// so nobody writes a reason that cannot count.
func (b *Bridge) openDecisionForm(ctx context.Context, a slackhook.Action, approvalID string, approve bool, notify func(string) error) error {
	ap, err := b.eng.Approval(ctx, approvalID)
	if errors.Is(err, engine.ErrNotFound) {
		return notify("This card is stale: its approval no longer exists.")
	}
	if err != nil {
		return err
	}
	if ap.Status != engine.ApprovalPending {
		return notify("This approval is already " + string(ap.Status) + ".")
	}
	if err := b.eng.MayDecide(ctx, ap.ID, engine.Decision{Approve: approve, By: a.User, Surface: engine.SurfaceSlack}); err != nil {
		return explain(err, notify)
	}
	f := slack.DecisionForm{Approval: ap.ID, Approve: approve, Channel: a.Channel, ThreadTS: a.ThreadTS}
	if err := b.poster.OpenDecisionForm(ctx, a.TriggerID, ap, f); err != nil {
		// The trigger lasts about 3 seconds; a slow inbox can miss it.
		b.log.Warn("slack decision form not opened", tools.LogApprovalID, ap.ID, tools.LogErr, err)
		return notify("The form could not be opened in time; click the button again.")
	}
	return nil
}

// onSubmission records a decision made through the form, with its
// comment or reason; a refusal is told to the person where they clicked.
func (b *Bridge) onSubmission(ctx context.Context, s slackhook.Submission) error {
	if s.CallbackID == slack.CallbackAnswer {
		return b.onAnswerForm(ctx, s)
	}
	if s.CallbackID != slack.CallbackDecision {
		return nil
	}
	f, err := slack.ParseDecisionForm(s.Metadata)
	if err != nil {
		return nil // not our form, or a forged one
	}
	_, err = b.eng.Decide(ctx, f.Approval, engine.Decision{Approve: f.Approve, By: s.User, Surface: engine.SurfaceSlack, Comment: s.Values[slack.CommentField]})
	notify := func(text string) error {
		if f.Channel == "" {
			return nil
		}
		return b.poster.Ephemeral(ctx, f.Channel, s.User, f.ThreadTS, text)
	}
	return explain(err, notify)
}
