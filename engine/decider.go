package engine

import (
	"context"
	"slices"
)

// ApprovalDecider describes, in terms a store can query, whom mayDecide
// lets decide an approval: the approvers of its agent; for an agent with
// no approvers (or one no longer configured), whoever started its
// session, through any identity linked to the same person; and, through
// an API key, anyone for the sessions of Origins.
type ApprovalDecider struct {
	// ApproverOf are the agents whose approvers include the person (by
	// their identity, a group they are in, or "person:ID").
	ApproverOf []string
	// Guarded are every agent that has approvers: the approvals of all
	// other agents are decided by who started the session.
	Guarded []string
	// StartedBy is the deciding identity; "" matches no session's starter.
	StartedBy string
	// Person is the person StartedBy is linked to on the surface it
	// decides from ("" for none). A session whose starter is linked to
	// Person, looked up as StarterSurfaces says, counts as theirs: the
	// store reads the links in its own people tables, the ones
	// People answers from in a deployment.
	Person string
	// Origins are the session origins whose approvals the person decides
	// through an API key (Decision.ViaAPI); empty for anyone else.
	Origins []Origin
}

// Matches reports whether the decider filter keeps a, in session s whose
// starter is linked to starterPerson ("" for nobody): the rule a store
// applies, stated in Go for tests.
func (d ApprovalDecider) Matches(a Approval, s Session, starterPerson string) bool {
	switch {
	case slices.Contains(d.ApproverOf, a.Agent):
		return true
	case !slices.Contains(d.Guarded, a.Agent) && d.startedBy(s, starterPerson):
		return true
	default:
		return slices.Contains(d.Origins, s.Origin)
	}
}

// startedBy reports whether the decider started s, as this identity or
// as another one of their person's.
func (d ApprovalDecider) startedBy(s Session, starterPerson string) bool {
	if d.StartedBy != "" && s.StartedBy == d.StartedBy {
		return true
	}
	return d.Person != "" && s.StartedBy != "" && starterPerson == d.Person
}

// StarterSurfaces are the surfaces on which a session of origin o records
// its starter, in the order their person is looked up (the first link
// found wins): a console session was started by a Slack sign-in or a key
// holder, so the console is tried first, then Slack, then the API.
func StarterSurfaces(o Origin) []string {
	if o == OriginConsole {
		return []string{SurfaceConsole, SurfaceSlack, SurfaceAPI}
	}
	return []string{string(o)}
}

// Decider is the filter of the approvals d.By may decide, by the rule
// Decide applies to d (group memberships are read now, as a decision
// would). d needs a surface (Surface, or ViaAPI for the API): the person
// behind d.By is found there, as a decision by d finds them.
func (e *Engine) Decider(ctx context.Context, d Decision) (ApprovalDecider, error) {
	surface := deciderSurface(d, Session{})
	if surface == "" {
		return ApprovalDecider{}, Errorf(CodeInvalid, "the approvals %s may decide: no surface to find their person on", d.By)
	}
	out := ApprovalDecider{StartedBy: d.By, Person: e.personOf(ctx, surface, d.By)}
	for name, agent := range e.agents {
		if len(agent.Approvers) == 0 {
			continue
		}
		out.Guarded = append(out.Guarded, name)
		if d.By != "" && e.isApprover(ctx, agent.Approvers, d.By, out.Person) {
			out.ApproverOf = append(out.ApproverOf, name)
		}
	}
	slices.Sort(out.Guarded)
	slices.Sort(out.ApproverOf)
	if d.ViaAPI {
		out.Origins = []Origin{OriginAPI, OriginConsole}
	}
	return out, nil
}

// DecidableApprovals returns up to limit pending approvals, newest first,
// that d.By (on d.Surface, or through an API key with d.ViaAPI) may
// decide and has not voted on yet, through this identity or another of
// their person's (one person is one vote). The store finds them by the decider
// filter; each is checked again by the rule itself, so a filter that kept
// too much can never show someone a card they may not decide.
func (e *Engine) DecidableApprovals(ctx context.Context, d Decision, limit int) ([]Approval, error) {
	filter, err := e.Decider(ctx, d)
	if err != nil {
		return nil, err
	}
	pending, err := e.store.Approvals(ctx, ApprovalFilter{Statuses: []ApprovalStatus{ApprovalPending}, Decider: &filter, Limit: limit})
	if err != nil {
		return nil, err
	}
	check := Decision{By: d.By, ViaAPI: d.ViaAPI, Surface: d.Surface}
	out := pending[:0]
	for _, a := range pending {
		if _, asPerson := a.votedAsPerson(filter.Person); asPerson || a.VotedBy(d.By) {
			continue // their part is done; others must approve
		}
		if _, _, err := e.authorize(ctx, a, check); err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}
