package engine

import (
	"context"
	"slices"
	"time"

	"brain/tools"
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

// isStopping reports whether Stop began.
func (e *Engine) isStopping() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopping
}

// sweepApprovals expires pending approvals until Stop.
func (e *Engine) sweepApprovals(ctx context.Context) {
	tick := time.NewTicker(e.expirySweep)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := e.ExpireApprovals(ctx); err != nil && ctx.Err() == nil {
				e.log.Error("expire approvals", tools.LogErr, err)
			}
			if err := e.RemindApprovals(ctx); err != nil && ctx.Err() == nil {
				e.log.Error("remind approvals", tools.LogErr, err)
			}
		case <-ctx.Done():
			return
		}
	}
}
