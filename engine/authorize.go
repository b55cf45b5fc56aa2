package engine

import (
	"context"
	"strings"
)

// authorize is the one rule of who may decide a (it returns the person
// d.By is linked to and the surface d.By is an identity on), for every way in (API,
// console, Slack cards, the Home tab, Linear): the agent's approvers when
// configured, else the person who started the session; an API key holder
// (who decides under the key's name) may decide for sessions started
// through the API or the console. A policy's forbid_self then keeps the
// requester from approving their own request, compared by authenticated
// identity: the person the session was started by, and the API key that
// started it (a key with act_for that started a session for alice cannot
// approve it for bob).
func (e *Engine) authorize(ctx context.Context, a Approval, d Decision) (person, surface string, err error) {
	s, err := e.store.Session(ctx, a.SessionID)
	if err != nil {
		return "", "", err
	}
	surface = deciderSurface(d, s)
	person = e.personOf(ctx, surface, d.By)
	if err := e.mayDecide(ctx, a, s, d, person); err != nil {
		return "", "", err
	}
	if !d.Approve || !a.ForbidSelf {
		return person, surface, nil
	}
	if a.RequestedBy != "" && d.By == a.RequestedBy {
		return "", "", Errorf(CodeForbidden, "%s may not approve their own request: policy %q needs someone else", d.By, a.Policy)
	}
	if person != "" && person == e.requesterPerson(ctx, s) {
		return "", "", Errorf(CodeForbidden, "%s is %s%s, who asked for this: policy %q needs someone else", d.By, PersonPrefix, person, a.Policy)
	}
	if d.Key != "" && d.Key == s.StartedKey {
		return "", "", Errorf(CodeForbidden, "the API key %s started this session, so it may not approve its own request, whoever it names: policy %q needs someone else", d.Key, a.Policy)
	}
	return person, surface, nil
}

// mayDecide says whether d.By (linked to person, "" for nobody) is
// someone who decides a's approvals in s.
func (e *Engine) mayDecide(ctx context.Context, a Approval, s Session, d Decision, person string) error {
	if d.ViaAPI && (s.Origin == OriginAPI || s.Origin == OriginConsole) {
		return nil
	}
	approvers := e.approversOf(a)
	if len(approvers) > 0 {
		if e.isApprover(ctx, approvers, d.By, person) {
			return nil
		}
		return Errorf(CodeForbidden, "%s may not decide this approval; the approvers are %s", d.By, strings.Join(approvers, ", "))
	}
	if s.StartedBy != "" && d.By == s.StartedBy {
		return nil
	}
	if person != "" && person == e.requesterPerson(ctx, s) {
		return nil // the person who started the session, from another surface
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

func orNobody(s string) string {
	if s == "" {
		return "a configured approver"
	}
	return s
}
