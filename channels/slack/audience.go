package slack

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"brain/engine"
	"brain/tools"
)

// Audience is who gets an approval's card besides the session's thread
// (approvals.notify). Every copy is kept up to date; a click on any copy
// decides the same approval, which counts once.
type Audience struct {
	// Channel is an approvers' channel that gets a copy of each card.
	Channel string
	// DMs returns the people who get a copy as a direct message, for an
	// agent's approvals (its configured approvers).
	DMs func(agent string) []string
}

// reDMUser is a Slack user id a DM can be opened with.
var reDMUser = regexp.MustCompile(`^[UW][A-Z0-9]+$`)

// cardCopy is one posted copy of a card.
type cardCopy struct{ channel, ts string }

// parseCopies reads the stored reference of a card: entries separated by
// spaces, the thread's copy first as a bare ts (the whole reference before
// cards had copies), the others as "CHANNEL/TS".
func parseCopies(ref, threadChannel string) []cardCopy {
	var out []cardCopy
	for _, f := range strings.Fields(ref) {
		if ch, ts, ok := strings.Cut(f, "/"); ok {
			out = append(out, cardCopy{ch, ts})
		} else {
			out = append(out, cardCopy{threadChannel, f})
		}
	}
	return out
}

func formatCopies(cs []cardCopy, threadChannel string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.ts
		if c.channel != threadChannel {
			parts[i] = c.channel + "/" + c.ts
		}
	}
	return strings.Join(parts, " ")
}

// postApproval posts the card in the thread and, while it is pending, to
// its audience, saving the references after each post so a redelivery
// posts only the copies still missing.
func (r *Renderer) postApproval(ctx context.Context, s engine.Session, channel, threadTS, id string) error {
	a, err := r.Engine.Approval(ctx, id)
	if err != nil {
		return err
	}
	ref, _, err := r.Store.ApprovalMessage(ctx, engine.OriginSlack, id)
	if err != nil {
		return err
	}
	copies := parseCopies(ref, channel)
	targets := []cardCopy{{channel, threadTS}}
	if a.Status == engine.ApprovalPending {
		targets = append(targets, r.audienceOf(s, channel)...)
	}
	for i, t := range targets {
		to := t.channel
		if strings.HasPrefix(to, "@") {
			if to, err = r.Poster.OpenDM(ctx, to[1:]); err != nil {
				r.Log.Warn("no DM for an approval card", tools.LogSession, s.ID, tools.LogErr, err)
				continue // one unreachable approver does not stall the thread
			}
		}
		if slices.ContainsFunc(copies, func(c cardCopy) bool { return c.channel == to }) {
			continue // posted before a crash, or by a delivery being retried
		}
		ts, err := r.Poster.PostApproval(ctx, to, t.ts, a)
		if err != nil {
			if i == 0 {
				return err
			}
			r.Log.Warn("approval card copy not posted", tools.LogSession, s.ID, tools.LogErr, err)
			continue
		}
		copies = append(copies, cardCopy{to, ts})
		if err := r.Store.SetApprovalMessage(ctx, r.Now(), engine.OriginSlack, id, formatCopies(copies, channel)); err != nil {
			return err
		}
	}
	return nil
}

// audienceOf is where copies of a session's cards go: the approvers'
// channel (unless the thread is in it) and "@USER" for each DM.
func (r *Renderer) audienceOf(s engine.Session, threadChannel string) []cardCopy {
	var out []cardCopy
	if c := r.Audience.Channel; c != "" && c != threadChannel {
		out = append(out, cardCopy{c, ""})
	}
	if r.Audience.DMs != nil {
		for _, u := range r.Audience.DMs(s.Agent) {
			if reDMUser.MatchString(u) {
				out = append(out, cardCopy{"@" + u, ""})
			}
		}
	}
	return out
}

// updateApproval re-renders every copy of the card.
func (r *Renderer) updateApproval(ctx context.Context, channel, id string) error {
	ref, ok, err := r.Store.ApprovalMessage(ctx, engine.OriginSlack, id)
	if err != nil || !ok {
		return err
	}
	a, err := r.Engine.Approval(ctx, id)
	if err != nil {
		return err
	}
	var errs []error
	for i, c := range parseCopies(ref, channel) {
		if err := r.Poster.UpdateApproval(ctx, c.channel, c.ts, a); err != nil {
			if i == 0 {
				return err
			}
			errs = append(errs, err)
		}
	}
	for _, err := range errs {
		r.Log.Warn("approval card copy not updated", tools.LogApprovalID, id, tools.LogErr, err)
	}
	return nil
}

// remindApproval replies in the thread, and under every other copy of a
// pending card, that it is about to expire.
func (r *Renderer) remindApproval(ctx context.Context, channel, threadTS string, d engine.ApprovalReminder) error {
	a, err := r.Engine.Approval(ctx, d.ApprovalID)
	if err != nil || a.Status != engine.ApprovalPending {
		return err // decided since: nothing to remind of
	}
	ref, ok, err := r.Store.ApprovalMessage(ctx, engine.OriginSlack, d.ApprovalID)
	if err != nil || !ok {
		return err
	}
	title := strings.TrimSpace(a.Card.Title)
	if title == "" {
		title = a.Tool
	}
	text := fmt.Sprintf(":alarm_clock: *%s* is still waiting for a decision and expires %s.", Escape(truncate(title, maxHeader)), slackDate(a.ExpiresAt))
	if a.Needed() > 1 {
		text += fmt.Sprintf(" It has %d of %d approvals.", len(a.Votes), a.Needed())
	}
	for i, c := range parseCopies(ref, channel) {
		under := c.ts
		if i == 0 {
			under = threadTS
		}
		if _, err := r.Poster.post(ctx, c.channel, slack.MsgOptionText(text, false), slack.MsgOptionTS(under)); err != nil {
			if i == 0 {
				return fmt.Errorf("post approval reminder: %w", err)
			}
			r.Log.Warn("approval reminder copy not posted", tools.LogApprovalID, a.ID, tools.LogErr, err)
		}
	}
	return nil
}

// OpenDM returns the id of the direct-message channel with user.
func (p *Poster) OpenDM(ctx context.Context, user string) (string, error) {
	var id string
	err := p.call(ctx, "conversations.open", func(ctx context.Context) error {
		ch, _, _, err := p.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
		if err == nil {
			id = ch.ID
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("open DM with %s: %w", user, err)
	}
	return id, nil
}
