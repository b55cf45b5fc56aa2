package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"brain/engine/policy"
	"brain/tools"
)

// applyPolicy shapes a new approval by the policy that matched its call:
// a review policy sets how many people must approve and whether the
// requester may; auto_approve decides it at once, as the policy. ok is
// true when the outcome is final (auto-approved).
func (e *Engine) applyPolicy(a *Approval, p policy.ApprovalPolicy, now time.Time) (toolOutcome, bool) {
	a.Policy = p.Name
	switch p.Action {
	case policy.PolicyReview:
		a.Required, a.ForbidSelf = p.Require, p.ForbidSelf
		return toolOutcome{}, false
	case policy.PolicyAutoApprove:
		a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt, a.Attempts = ApprovalApplying, e.newID("dec"), policyBy(p.Name), now, 1
		return toolOutcome{
			Text: fmt.Sprintf("Approved under policy %q as %s: %q is being applied now. You will see whether it was applied in a later message; "+
				"do not report it as done before then.", p.Name, a.ID, a.Card.Title),
			approval: a,
		}, true
	}
	return toolOutcome{}, false
}

// policyHolds reports whether a policy holds a call of a run tool that lets
// policies hold it (tools.Definition.Hold): a review or deny policy
// matches it. Such a call then takes the approval path (proposeCall);
// calls no such policy matches run at once, as the tool's others do.
func (e *Engine) policyHolds(tool *tools.Tool, input json.RawMessage) bool {
	if tool.Hold == nil || tool.Run == nil {
		return false
	}
	pol, ok := e.policies.Match(tool.Name, input, tool.FoldCase...)
	return ok && (pol.Action == policy.PolicyReview || pol.Action == policy.PolicyDeny)
}

// policyDecision is the approval.decided of an auto-approval.
func policyDecision(a Approval) ApprovalDecided {
	return ApprovalDecided{
		ApprovalID: a.ID, Decision: DecisionApprove, By: a.DecidedBy, DecisionID: a.DecisionID,
		Tool: a.Tool, Title: a.Card.Title, Policy: a.Policy,
	}
}

// RemindApprovals records a reminder on each pending approval that expires
// within RemindBefore and has had none, so channels can remind its
// audience once. The engine runs it with the expiry sweep; it is exported
// for tests and operators.
func (e *Engine) RemindApprovals(ctx context.Context) error {
	if e.remindBefore <= 0 {
		return nil
	}
	now := e.now()
	due, err := e.store.Approvals(ctx, ApprovalFilter{Statuses: []ApprovalStatus{ApprovalPending}, ExpiresBefore: now.Add(e.remindBefore)})
	if err != nil {
		return fmt.Errorf("list approvals to remind: %w", err)
	}
	for _, a := range due {
		if !a.RemindedAt.IsZero() || !now.Before(a.ExpiresAt) {
			continue
		}
		evs, err := e.events("", ApprovalReminder{ApprovalID: a.ID, ExpiresAt: a.ExpiresAt, Title: a.Card.Title, Tool: a.Tool})
		if err != nil {
			return fmt.Errorf("remind approval %s: %w", a.ID, err)
		}
		_, _, err = e.commitApproval(ctx, ApprovalCommit{
			ID: a.ID, Now: now,
			Update: func(cur *Approval) error {
				if cur.Status != ApprovalPending || !cur.RemindedAt.IsZero() {
					return errNothingToDo
				}
				cur.RemindedAt = now
				return nil
			},
			Events: evs,
		})
		if err != nil && !errors.Is(err, errNothingToDo) {
			return fmt.Errorf("remind approval %s: %w", a.ID, err)
		}
	}
	return nil
}
