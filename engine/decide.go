package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Decision is a person's answer to an approval.
type Decision struct {
	Approve bool
	// By names who decided: a platform user id, or any label via the API.
	By string
	// ViaAPI is true for a caller holding an API key: it may decide
	// approvals of sessions started through the API or the console.
	ViaAPI bool
	// Comment is the approver's comment (approve) or the reason (deny).
	Comment string
}

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
	if err := e.authorize(ctx, a, d); err != nil {
		return Approval{}, err
	}
	if a.Status == ApprovalPending && !e.now().Before(a.ExpiresAt) {
		e.expire(ctx, a.ID)
		return Approval{}, Errorf(CodeConflict, "approval %s expired at %s", a.ID, a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	decisionID := e.newID("dec")
	now := e.now()
	got, _, err := e.commitApproval(ctx, ApprovalCommit{
		ID: a.ID, Now: now,
		Update: func(a *Approval) error {
			if a.Status != ApprovalPending {
				return alreadyDecided(*a)
			}
			if !d.Approve {
				a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt, a.Comment = ApprovalDenied, decisionID, d.By, now, comment
				return nil
			}
			if a.VotedBy(d.By) {
				return Errorf(CodeConflict, "%s has already approved %s; it needs %d more approval(s) from someone else",
					d.By, a.ID, a.Needed()-len(a.Votes))
			}
			if a.Needed() > 1 {
				a.Votes = append(a.Votes, Vote{By: d.By, At: now.UTC(), Comment: comment})
				if len(a.Votes) < a.Needed() {
					return nil // still pending: recorded as approval.voted
				}
			}
			a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt, a.Comment = ApprovalApplying, decisionID, d.By, now, comment
			a.Attempts = 1
			return nil
		},
		Emit: func(a Approval) ([]Event, error) {
			if a.Status == ApprovalPending {
				return e.events("", ApprovalVoted{ApprovalID: a.ID, By: d.By, Comment: comment, Count: len(a.Votes), Required: a.Needed(), Policy: a.Policy})
			}
			decision := DecisionDeny
			if d.Approve {
				decision = DecisionApprove
			}
			return e.events("", ApprovalDecided{
				ApprovalID: a.ID, Decision: decision, By: d.By, DecisionID: decisionID, Tool: a.Tool, Title: a.Card.Title,
				Comment: comment, Policy: a.Policy, Approvals: a.Votes,
			})
		},
	})
	if err != nil {
		return Approval{}, err
	}
	switch got.Status {
	case ApprovalPending:
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

func alreadyDecided(a Approval) error {
	switch a.Status {
	case ApprovalExpired:
		return Errorf(CodeConflict, "approval %s has expired", a.ID)
	case ApprovalDenied:
		return Errorf(CodeConflict, "approval %s was already denied by %s", a.ID, a.DecidedBy)
	default:
		return Errorf(CodeConflict, "approval %s was already approved by %s (now %s)", a.ID, a.DecidedBy, a.Status)
	}
}

// authorize is the one rule of who may decide a, for every way in (API,
// console, Slack cards, the Home tab, Linear): the agent's approvers when
// configured, else the person who started the session; an API key holder
// (who decides under the key's name) may decide for sessions started
// through the API or the console. A policy's forbid_self then keeps the
// requester from approving their own request.
func (e *Engine) authorize(ctx context.Context, a Approval, d Decision) error {
	if err := e.mayDecide(ctx, a, d); err != nil {
		return err
	}
	if d.Approve && a.ForbidSelf && a.RequestedBy != "" && d.By == a.RequestedBy {
		return Errorf(CodeForbidden, "%s may not approve their own request: policy %q needs someone else", d.By, a.Policy)
	}
	return nil
}

// mayDecide says whether d.By is someone who decides a's approvals.
func (e *Engine) mayDecide(ctx context.Context, a Approval, d Decision) error {
	s, err := e.store.Session(ctx, a.SessionID)
	if err != nil {
		return err
	}
	if d.ViaAPI && (s.Origin == OriginAPI || s.Origin == OriginConsole) {
		return nil
	}
	approvers := e.approversOf(a)
	if len(approvers) > 0 {
		if e.isApprover(ctx, approvers, d.By) {
			return nil
		}
		return Errorf(CodeForbidden, "%s may not decide this approval; the approvers are %s", d.By, strings.Join(approvers, ", "))
	}
	if s.StartedBy != "" && d.By == s.StartedBy {
		return nil
	}
	return Errorf(CodeForbidden, "%s may not decide this approval; only %s, who started the session, may", d.By, orNobody(s.StartedBy))
}

// approversOf is the configured approvers of a's agent.
func (e *Engine) approversOf(a Approval) []string {
	if agent, ok := e.agents[a.Agent]; ok {
		return agent.Approvers
	}
	return nil
}

// isApprover reports whether by is one of approvers. It is the one place a
// person is matched against the list, so other kinds of entries (a group
// of people) are resolved here.
func (e *Engine) isApprover(_ context.Context, approvers []string, by string) bool {
	return slices.Contains(approvers, by)
}

func orNobody(s string) string {
	if s == "" {
		return "a configured approver"
	}
	return s
}

// policyBy is the DecidedBy of an approval a policy decided.
func policyBy(name string) string { return fmt.Sprintf("policy:%s", name) }
