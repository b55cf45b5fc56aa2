package engine

import (
	"context"
	"slices"
	"strings"
)

// ApprovalDecider describes, in terms a store can query, whom mayDecide
// lets decide an approval: the approvers of its agent; for an agent with
// no approvers (or one no longer configured), whoever started its
// session; and, through an API key, anyone for the sessions of Origins.
type ApprovalDecider struct {
	// ApproverOf are the agents whose approvers include the person.
	ApproverOf []string
	// Guarded are every agent that has approvers: the approvals of all
	// other agents are decided by who started the session.
	Guarded []string
	// StartedBy is the person; "" matches no session's starter.
	StartedBy string
	// Origins are the session origins whose approvals the person decides
	// through an API key (Decision.ViaAPI); empty for anyone else.
	Origins []Origin
}

// Matches reports whether the decider filter keeps a, in session s: the
// rule a store applies, for stores that filter in memory and for tests.
func (d ApprovalDecider) Matches(a Approval, s Session) bool {
	switch {
	case slices.Contains(d.ApproverOf, a.Agent):
		return true
	case !slices.Contains(d.Guarded, a.Agent) && d.StartedBy != "" && s.StartedBy == d.StartedBy:
		return true
	default:
		return slices.Contains(d.Origins, s.Origin)
	}
}

// Decider is the filter of the approvals by may decide, by the rule
// Decide applies (group memberships are read now, as a decision would).
// viaAPI adds what a decision through an API key may decide.
func (e *Engine) Decider(ctx context.Context, by string, viaAPI bool) ApprovalDecider {
	d := ApprovalDecider{StartedBy: by}
	for name, agent := range e.agents {
		if len(agent.Approvers) == 0 {
			continue
		}
		d.Guarded = append(d.Guarded, name)
		// An approvers entry naming a person may be this one through any
		// of their identities, which depend on the surface: such agents
		// are kept, and the rule itself checks each row found.
		namesPerson := slices.ContainsFunc(agent.Approvers, func(entry string) bool { return strings.HasPrefix(entry, PersonPrefix) })
		if by != "" && (namesPerson || e.isApprover(ctx, agent.Approvers, by, "")) {
			d.ApproverOf = append(d.ApproverOf, name)
		}
	}
	slices.Sort(d.Guarded)
	slices.Sort(d.ApproverOf)
	if viaAPI {
		d.Origins = []Origin{OriginAPI, OriginConsole}
	}
	return d
}

// DecidableApprovals returns up to limit pending approvals, newest first,
// that by may decide and has not voted on yet. The store finds them by
// the decider filter; each is checked again by the rule itself, so a
// filter that kept too much can never show someone a card they may not
// decide.
func (e *Engine) DecidableApprovals(ctx context.Context, by string, viaAPI bool, limit int) ([]Approval, error) {
	d := e.Decider(ctx, by, viaAPI)
	pending, err := e.store.Approvals(ctx, ApprovalFilter{Statuses: []ApprovalStatus{ApprovalPending}, Decider: &d, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := pending[:0]
	for _, a := range pending {
		if a.VotedBy(by) {
			continue // their part is done; others must approve
		}
		ok := e.MayDecideApproval(ctx, a, by) == nil
		if !ok && viaAPI {
			_, _, err := e.authorize(ctx, a, Decision{By: by, ViaAPI: true})
			ok = err == nil
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, nil
}
