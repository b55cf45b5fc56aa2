package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"brain/engine"
)

// maxHomeBlocks is Slack's limit on the blocks of a Home tab view.
const maxHomeBlocks = 100

// maxHomeSessions bounds the recent sessions listed.
const maxHomeSessions = 10

// HomeView is what a person's App Home tab shows: an optional notice (a
// refused click), the approvals they may decide and their recent sessions.
type HomeView struct {
	Notice    string
	Approvals []HomeApproval
	Sessions  []HomeSession
	// SessionsCapped says Sessions is the first page of a longer list:
	// the "and N more" line reads "N+".
	SessionsCapped bool
	// ShowConnections adds the person's connections (homeconn.go).
	ShowConnections bool
	Connections     []HomeConnection
}

// HomeApproval is a pending approval and a link to its thread ("" when it
// has none).
type HomeApproval struct {
	Approval engine.Approval
	Link     string
}

// HomeSession is a session and a link to its thread.
type HomeSession struct {
	Session engine.Session
	Link    string
}

// PublishHome publishes v as user's Home tab (views.publish).
func (r *Reader) PublishHome(ctx context.Context, user string, v HomeView) error {
	blocks, err := HomeBlocks(v)
	if err != nil {
		return err
	}
	req := slack.PublishViewContextRequest{UserID: user, View: slack.HomeTabViewRequest{
		Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}, CallbackID: "brain_home",
	}}
	if _, err := r.api.PublishViewContext(ctx, req); err != nil {
		return fmt.Errorf("publish home of %s: %w", user, err)
	}
	return nil
}

// HomeBlocks lays v out within Slack's 100 blocks: each approval takes
// three (summary, facts, Approve/Deny), and what does not fit is counted
// in an "and N more" line.
func HomeBlocks(v HomeView) ([]slack.Block, error) {
	sessions := v.Sessions
	moreSessions := 0
	if len(sessions) > maxHomeSessions {
		sessions, moreSessions = sessions[:maxHomeSessions], len(sessions)-maxHomeSessions
	}
	fixed := 3 + max(len(sessions), 1) // two headers, a divider, the sessions (or "none")
	if v.Notice != "" {
		fixed++
	}
	if moreSessions > 0 {
		fixed++
	}
	conns := connectionBlocks(v)
	fixed += len(conns)
	room := maxHomeBlocks - fixed
	shown := v.Approvals
	if 3*len(shown) > room {
		shown = shown[:(room-1)/3] // keep one block for "and N more"
	}

	var blocks []slack.Block
	if v.Notice != "" {
		blocks = append(blocks, section("home_notice", ":information_source: "+Escape(truncate(v.Notice, maxErrorText))))
	}
	blocks = append(blocks, slack.NewHeaderBlock(plain("Waiting for your decision"), slack.HeaderBlockOptionBlockID("home_approvals")))
	if len(v.Approvals) == 0 {
		blocks = append(blocks, contextLine("home_no_approvals", "Nothing waits for you."))
	}
	for i, ha := range shown {
		bs, err := homeApproval(i, ha)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, bs...)
	}
	if n := len(v.Approvals) - len(shown); n > 0 {
		blocks = append(blocks, contextLine("home_more_approvals", fmt.Sprintf("…and %d more", n)))
	}
	blocks = append(blocks, slack.NewDividerBlock(),
		slack.NewHeaderBlock(plain("Your recent sessions"), slack.HeaderBlockOptionBlockID("home_sessions")))
	if len(sessions) == 0 {
		blocks = append(blocks, contextLine("home_no_sessions", "No sessions yet: mention the bot in a thread to start one."))
	}
	for i, hs := range sessions {
		blocks = append(blocks, section(fmt.Sprintf("home_s%d", i), sessionLine(hs)))
	}
	if moreSessions > 0 {
		plus := ""
		if v.SessionsCapped {
			plus = "+"
		}
		blocks = append(blocks, contextLine("home_more_sessions", fmt.Sprintf("…and %d%s more", moreSessions, plus)))
	}
	return append(blocks, conns...), nil
}

func homeApproval(i int, ha HomeApproval) ([]slack.Block, error) {
	a := ha.Approval
	title := "*" + Escape(truncate(a.Card.Title, 200)) + "*"
	if ha.Link != "" {
		title += " · <" + ha.Link + "|thread>"
	}
	if a.RequestedBy != "" {
		title += "\nrequested by <@" + a.RequestedBy + ">"
	}
	var facts []string
	for _, f := range a.Card.Facts {
		facts = append(facts, Escape(truncate(f.Label, 80))+": "+Escape(truncate(f.Value, 200)))
	}
	factLine := strings.Join(facts, " · ")
	if factLine == "" {
		factLine = "Tool " + Escape(a.Tool)
	}
	v, err := encodeValue(ButtonValue{Approval: a.ID})
	if err != nil {
		return nil, err
	}
	approve := slack.NewButtonBlockElement(ActionApprove, v, plain("Approve")).WithStyle(slack.StylePrimary)
	deny := slack.NewButtonBlockElement(ActionDeny, v, plain("Deny")).WithStyle(slack.StyleDanger)
	return []slack.Block{
		section(fmt.Sprintf("home_a%d", i), title),
		contextLine(fmt.Sprintf("home_a%d_facts", i), truncate(factLine, maxSection)),
		slack.NewActionBlock(fmt.Sprintf("home_a%d_act", i), approve, deny),
	}, nil
}

func sessionLine(hs HomeSession) string {
	s := hs.Session
	line := fmt.Sprintf("`%s` · %s · updated <!date^%d^{date_short_pretty} {time}|%s>",
		s.Status, Escape(s.Agent), s.UpdatedAt.Unix(), s.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if hs.Link != "" {
		line += " · <" + hs.Link + "|open thread>"
	}
	return line
}

// ThreadLink is the permalink of a Slack session's thread, from the
// workspace URL auth.test gave: URL/archives/CHANNEL/pTS. "" when the
// session is not in a Slack thread or the URL is unknown.
func ThreadLink(workspaceURL string, s engine.Session) string {
	channel, ts, ok := splitThreadKey(s.ThreadKey)
	if !ok || workspaceURL == "" {
		return ""
	}
	return strings.TrimSuffix(workspaceURL, "/") + "/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
}
