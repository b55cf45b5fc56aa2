package linearbridge

import (
	"context"
	"errors"
	"strings"
	"time"

	"brain/channels/linear"
	"brain/engine"
	"brain/tools"
	"brain/webhooks/linearhook"
)

// ackTimeout bounds the early acknowledgement of a created session;
// Linear marks a session unresponsive after 10 s without an activity.
const ackTimeout = 8 * time.Second

// ackText is the first thought of every session.
const ackText = "Looking into it…"

// ackID is the id of a session's first thought: the early one from the
// webhook and the worker's own are the same activity.
func ackID(agentSessionID string) string { return linear.ActivityID(agentSessionID, "ack") }

// ackEarly acknowledges a created session as soon as it is recorded, so
// the first activity reaches Linear within its 10 s even when the worker
// is busy with earlier items. The worker sends the same activity again
// (same id): Linear keeps one.
func (b *Bridge) ackEarly(it linearhook.Item) {
	if it.Kind != linearhook.KindCreated {
		return
	}
	b.acks.Add(1)
	go func() {
		defer b.acks.Done()
		ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
		defer cancel()
		if park, err := b.parked(ctx, it.OrganizationID); err != nil || park {
			return
		}
		c, err := b.client(ctx, it.OrganizationID)
		if err == nil {
			err = c.Thought(ctx, it.SessionID, ackID(it.SessionID), ackText, false)
		}
		if err != nil {
			b.log.Warn("early acknowledgement of a linear session failed; the worker sends it again", tools.LogErr, err)
		}
	}()
}

// prompt is the first input of a session from Linear: the workspace's and
// team's guidance, as instructions from the workspace, then the issue's
// prompt context.
func prompt(it linearhook.Item) string {
	text := it.Prompt()
	if it.Kind == linearhook.KindCreated && strings.TrimSpace(it.Guidance) != "" {
		text = "Instructions from the Linear workspace (follow them):\n" + it.Guidance + "\n\n" + text
	}
	return text
}

// startSession follows Linear's conventions for a new agent session: a
// link to the session in brain (when public_url is set) and, for a
// delegated issue not yet started, moving it to the team's first started
// state and making the app its delegate. None of it is worth failing the
// session for: failures are logged.
func (b *Bridge) startSession(ctx context.Context, c *linear.Client, it linearhook.Item, s engine.Session) {
	if b.publicURL != "" {
		// The session's page in the web console.
		if err := c.AddExternalURL(ctx, it.SessionID, "brain session", b.publicURL+"/sessions/"+s.ID); err != nil {
			b.log.Warn("link linear session to brain", tools.LogErr, err)
		}
	}
	if !b.cfg.MovesToStarted() || it.IssueID == "" {
		return
	}
	is, err := c.Issue(ctx, it.IssueID)
	if err != nil {
		b.log.Warn("read delegated linear issue", tools.LogIssue, it.IssueIdentifier, tools.LogErr, err)
		return
	}
	state, delegate := "", ""
	if is.NotStarted() {
		state = is.StartedStateID
	}
	if is.DelegateID == "" {
		delegate = b.appUser(ctx, it.OrganizationID)
	}
	if err := c.UpdateIssue(ctx, is.ID, state, delegate); err != nil {
		b.log.Warn("move delegated linear issue to started", tools.LogIssue, it.IssueIdentifier, tools.LogErr, err)
	}
}

// appUser is the app's user id in a workspace, "" when unknown (a static
// token).
func (b *Bridge) appUser(ctx context.Context, org string) string {
	if org == "" {
		return ""
	}
	tok, err := b.store.LinearToken(ctx, org)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		b.log.Warn("read linear workspace", tools.LogOrg, org, tools.LogErr, err)
	}
	return tok.AppUserID
}
