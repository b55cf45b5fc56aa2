package slackbridge

import (
	"context"
	"fmt"
	"slices"

	"brain/channels/slack"
	"brain/engine"
	"brain/store"
	"brain/tools"
)

// Bounds of the Home tab's reads.
const (
	homeApprovals = 500 // of the approvals a person may decide, newest first (the tab shows the newest and counts the rest)
	maxHomeUsers  = 1000
)

// homeUsers remembers who opened the Home tab since start, so their tab
// is refreshed when an approval they may decide changes, and the notice
// their last click there got, kept on top until they open the tab again.
// Oldest go first past maxHomeUsers; a forgotten person's tab refreshes
// when next opened.
type homeUsers struct {
	ids     []string
	notices map[string]string
}

func (h *homeUsers) add(user string) {
	if i := slices.Index(h.ids, user); i >= 0 {
		h.ids = slices.Delete(h.ids, i, i+1)
	}
	h.ids = append(h.ids, user)
	if len(h.ids) > maxHomeUsers {
		delete(h.notices, h.ids[0])
		h.ids = h.ids[1:]
	}
}

// rememberHome records that user opened the tab; it clears their notice.
func (b *Bridge) rememberHome(user string) {
	b.mu.Lock()
	b.homes.add(user)
	delete(b.homes.notices, user)
	b.mu.Unlock()
}

func (b *Bridge) setHomeNotice(user, notice string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.homes.notices == nil {
		b.homes.notices = map[string]string{}
	}
	b.homes.notices[user] = notice
}

func (b *Bridge) homeNotice(user string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.homes.notices[user]
}

func (b *Bridge) homeUserIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.homes.ids)
}

// publishHome builds and publishes user's Home tab: the pending approvals
// they may decide (the rule Decide applies) and their recent Slack
// sessions, under the notice of their last click there, if any.
func (b *Bridge) publishHome(ctx context.Context, user string) error {
	// The database finds the approvals the person may decide (by the rule
	// Decide applies), however many others wait.
	pending, err := b.eng.DecidableApprovals(ctx, engine.Decision{By: user, Surface: engine.SurfaceSlack}, homeApprovals)
	if err != nil {
		return err
	}
	url := b.workspaceURL()
	view := slack.HomeView{Notice: b.homeNotice(user)}
	for _, a := range pending {
		ha := slack.HomeApproval{Approval: a}
		if s, err := b.eng.Session(ctx, a.SessionID); err == nil {
			ha.Link = slack.ThreadLink(url, s)
		}
		view.Approvals = append(view.Approvals, ha)
	}
	// The database finds the person's Slack sessions (by index), newest
	// first: a page of them, so the tab can say how many more there are.
	sessions, next, err := b.store.ListSessions(ctx, store.SessionQuery{Origin: engine.OriginSlack, Person: user, Limit: store.MaxSessionPage})
	if err != nil {
		return err
	}
	view.SessionsCapped = next != ""
	for _, s := range sessions {
		view.Sessions = append(view.Sessions, slack.HomeSession{Session: s, Link: slack.ThreadLink(url, s)})
	}
	if b.accounts != nil {
		view.ShowConnections = true
		if view.Connections, err = b.homeConnections(ctx, user); err != nil {
			return err
		}
	}
	return b.reader.PublishHome(ctx, user, view)
}

// onHomeAction handles a click on the Home tab: Approve and Deny decide
// exactly as on the card; the tab is published again with the outcome.
func (b *Bridge) onHomeAction(ctx context.Context, actionID, approvalID, user string) error {
	if actionID != slack.ActionApprove && actionID != slack.ActionDeny {
		return nil
	}
	a, err := b.eng.Decide(ctx, approvalID, engine.Decision{Approve: actionID == slack.ActionApprove, By: user, Surface: engine.SurfaceSlack})
	notice := ""
	switch {
	case err == nil:
		verb := "Approved"
		if a.Status == engine.ApprovalDenied {
			verb = "Denied"
		}
		notice = fmt.Sprintf("%s: %s", verb, a.Card.Title)
	default:
		var refused bool
		if notice, refused = refusal(err); !refused {
			return err
		}
	}
	b.setHomeNotice(user, notice)
	return b.publishHome(ctx, user)
}

// homeRefresher renders events like the Slack renderer and then, for a
// change to an approval, publishes again the Home tab of everyone who
// opened it and may decide that approval. A failed refresh is logged and
// does not hold back delivery to the thread.
type homeRefresher struct{ b *Bridge }

func (h homeRefresher) Render(ctx context.Context, s engine.Session, ev engine.Event) error {
	if err := h.b.code.Render(ctx, s, ev); err != nil {
		return err
	}
	var approvalID string
	switch p, _ := ev.Decode(); p := p.(type) {
	case engine.ApprovalRequested:
		approvalID = p.ApprovalID
	case engine.ApprovalUpdate:
		approvalID = p.UpdatedApproval()
	default:
		return nil
	}
	users := h.b.homeUserIDs()
	if len(users) == 0 {
		return nil
	}
	a, err := h.b.eng.Approval(ctx, approvalID)
	if err != nil {
		return err
	}
	for _, u := range users {
		if h.b.eng.MayDecideApproval(ctx, a, u) != nil {
			continue
		}
		if err := h.b.publishHome(ctx, u); err != nil {
			h.b.log.Warn("slack home tab not refreshed", tools.LogUser, u, tools.LogErr, err)
		}
	}
	return nil
}
