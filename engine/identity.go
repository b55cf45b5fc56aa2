package engine

import (
	"context"

	"brain/tools"
)

// requesterOf is who a turn's tool calls act for: the newest input's
// author on the session's surface. A schedule's session is marked as
// such (its author is the schedule's name, not a person), so a tool
// never mistakes it for someone who can connect an account.
func requesterOf(s Session, author string) tools.Identity {
	if s.Origin == OriginSchedule {
		return tools.Identity{Surface: tools.SurfaceSchedule, ExternalID: author}
	}
	if author == "" {
		author = s.StartedBy
	}
	return tools.Identity{Surface: string(s.Origin), ExternalID: author}
}

// applyIdentities are an approval's requester (the person the session
// talks to) and the person whose vote decided it (none when a policy
// did). The requester is read on the session's surface; the decider on
// the surface their decision came from (an API vote on a Slack session
// is an API identity), recorded on the approval.
func (e *Engine) applyIdentities(ctx context.Context, a Approval) (requester, approver tools.Identity) {
	s, err := e.store.Session(ctx, a.SessionID)
	if err != nil {
		return tools.Identity{}, tools.Identity{}
	}
	requester = requesterOf(s, a.RequestedBy)
	if a.DecidedBy != "" && !a.ByPolicy() && s.Origin != OriginSchedule {
		surface := a.DecidedSurface
		if surface == "" {
			surface = string(s.Origin) // decided before the surface was recorded
		}
		approver = tools.Identity{Surface: surface, ExternalID: a.DecidedBy}
	}
	return requester, approver
}
