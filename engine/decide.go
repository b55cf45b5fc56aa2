package engine

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"brain/engine/lease"
)

// MaxComment bounds a decision's comment or reason, in characters.
const MaxComment = 2000

// Decide records a decision on an approval. A deny, or the last of the
// approvals it needs (one unless a policy requires more, each from a
// different person), decides it: the first such decision wins atomically
// and later ones get a conflict naming who decided. Approving starts the
// apply in the background, with the decision id as its idempotency key.
func (e *Engine) Decide(ctx context.Context, approvalID string, d Decision) (Approval, error) {
	if strings.TrimSpace(d.By) == "" {
		return Approval{}, Errorf(CodeInvalid, "by is required: who decides")
	}
	comment, err := e.cleanComment(d.Comment)
	if err != nil {
		return Approval{}, err
	}
	a, err := e.store.Approval(ctx, approvalID)
	if err != nil {
		return Approval{}, err
	}
	person, surface, err := e.authorize(ctx, a, d)
	if err != nil {
		return Approval{}, err
	}
	if a.Status == ApprovalPending && !e.now().Before(a.ExpiresAt) {
		e.expire(ctx, a.ID)
		return Approval{}, Errorf(CodeConflict, "approval %s expired at %s", a.ID, a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	if d.Approve {
		// The apply's lease is taken before an approval that may be the
		// last one is recorded, so no replica ever sees it applying
		// without a live holder.
		if err := e.holdApply(ctx, a.ID); err != nil {
			return Approval{}, err
		}
	}
	decisionID := e.newID("dec")
	now := e.now()
	var fence *Fence // an approval is recorded under the apply's lease
	if d.Approve {
		fence = e.fence(lease.ApplyKey(a.ID))
	}
	got, _, err := e.commitApproval(ctx, ApprovalCommit{
		ID: a.ID, Now: now, Fence: fence,
		Update: func(a *Approval) error {
			if a.Status != ApprovalPending {
				return alreadyDecided(*a)
			}
			if !d.Approve {
				a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt, a.Comment = ApprovalDenied, decisionID, d.By, now, comment
				a.DecidedSurface = surface
				return nil
			}
			if a.VotedBy(d.By) {
				return Errorf(CodeConflict, "%s has already approved %s; it needs %d more approval(s) from someone else",
					d.By, a.ID, a.Needed()-len(a.Votes))
			}
			if v, ok := a.votedAsPerson(person); ok {
				return Errorf(CodeConflict, "%s is %s%s, who has already approved %s (as %s); one person is one vote; it needs %d more approval(s) from someone else",
					d.By, PersonPrefix, person, a.ID, v.By, a.Needed()-len(a.Votes))
			}
			if a.votedAs(d.By, d.Key) {
				return Errorf(CodeConflict, "the API key %s has already approved %s; one key is one vote, whoever it names; it needs %d more approval(s) from someone else",
					d.Key, a.ID, a.Needed()-len(a.Votes))
			}
			if a.Needed() > 1 {
				a.Votes = append(a.Votes, Vote{By: d.By, Key: d.Key, Person: person, At: now.UTC(), Comment: comment})
				if len(a.Votes) < a.Needed() {
					return nil // still pending: recorded as approval.voted
				}
			}
			a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt, a.Comment = ApprovalApplying, decisionID, d.By, now, comment
			a.DecidedSurface = surface
			a.Attempts = 1
			return nil
		},
		Emit: func(a Approval) ([]Event, error) {
			if a.Status == ApprovalPending {
				return e.events("", ApprovalVoted{ApprovalID: a.ID, By: d.By, Key: d.Key, Comment: comment, Count: len(a.Votes), Required: a.Needed(), Policy: a.Policy})
			}
			decision := DecisionDeny
			if d.Approve {
				decision = DecisionApprove
			}
			return e.events("", ApprovalDecided{
				ApprovalID: a.ID, Decision: decision, By: d.By, Key: d.Key, DecisionID: decisionID, Tool: a.Tool, Title: a.Card.Title,
				Comment: comment, Policy: a.Policy, Approvals: a.Votes,
			})
		},
	})
	if err != nil {
		if d.Approve {
			e.releaseApply(ctx, a.ID)
		}
		return Approval{}, takenOver(a.ID, err)
	}
	switch got.Status {
	case ApprovalPending:
		e.releaseApply(ctx, a.ID) // a vote; the last one applies
		e.count("approvals_votes")
	case ApprovalDenied:
		e.count("approvals_" + DecisionDeny)
	default:
		e.count("approvals_" + DecisionApprove)
		e.startApply(got)
	}
	return got, nil
}

// cleanComment trims a comment, drops control characters other than
// newlines and tabs (a NUL cannot be stored) and redacts secrets; one over
// MaxComment characters is refused rather than cut, so nobody's reason is
// silently changed.
func (e *Engine) cleanComment(s string) (string, error) {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s))
	if n := len([]rune(s)); n > MaxComment {
		return "", Errorf(CodeInvalid, "comment is %d characters; at most %d", n, MaxComment)
	}
	return e.scrub.String(s), nil
}

// policyBy is the DecidedBy of an approval a policy decided: the one place
// that writes it; ByPolicy is the one place that reads it.
func policyBy(name string) string { return fmt.Sprintf("policy:%s", name) }

// ByPolicy reports whether a policy, not a person, decided a.
func (a Approval) ByPolicy() bool { return a.Policy != "" && a.DecidedBy == policyBy(a.Policy) }

// ByPolicy reports whether a policy, not a person, made the decision.
func (p ApprovalDecided) ByPolicy() bool { return p.Policy != "" && p.By == policyBy(p.Policy) }

// MayDecide reports, as Decide would, whether d.By may make decision d on
// the approval: channels ask before they open a form for a comment, so
// nobody writes a reason that cannot count. It does not check the status.
func (e *Engine) MayDecide(ctx context.Context, approvalID string, d Decision) error {
	a, err := e.store.Approval(ctx, approvalID)
	if err != nil {
		return err
	}
	_, _, err = e.authorize(ctx, a, d)
	return err
}

// MayDecideApproval is MayDecide for an approval already read, for lists
// (the Slack Home tab) that show people what they may decide without a
// read per approval.
func (e *Engine) MayDecideApproval(ctx context.Context, a Approval, by string) error {
	_, _, err := e.authorize(ctx, a, Decision{By: by})
	return err
}
