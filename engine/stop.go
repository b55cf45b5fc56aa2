package engine

import (
	"context"
	"slices"
)

// StopFor is Cancel on behalf of a person clicking Stop in a channel: only
// the person the session talks to, or one of its agent's approvers, may
// stop it (others get CodeForbidden). stopped is false when there was
// nothing to stop (no turn running, no question open), so a second Stop
// changes nothing and says so.
func (e *Engine) StopFor(ctx context.Context, sessionID, by string) (s Session, stopped bool, err error) {
	s, err = e.store.Session(ctx, sessionID)
	if err != nil {
		return Session{}, false, err
	}
	var approvers []string
	if agent, ok := e.agents[s.Agent]; ok {
		approvers = agent.Approvers
	}
	if by == "" || (by != s.StartedBy && !slices.Contains(approvers, by)) {
		return s, false, Errorf(CodeForbidden, "only %s, who started the session, or an approver may stop it", orNobody(s.StartedBy))
	}
	if s.Status != StatusRunning && s.OpenQuestion() == nil {
		return s, false, nil
	}
	s, err = e.Cancel(ctx, sessionID)
	return s, err == nil, err
}
