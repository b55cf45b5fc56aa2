package slack

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// Code channels (Slack's agents.conversations.* methods): a channel Slack
// creates for one agent session, with a status, a context bar and view
// tabs. brain moves a Slack session there when it starts a coding task
// (bot/slackbridge decides when); these are the calls.

// maxContextItems is Slack's bound on a context bar; longer labels and
// keys are cut to its limits.
const (
	maxContextItems = 5
	maxContextKey   = 64
	maxContextLabel = 128
	maxViewContent  = 1_000_000 // setView content, bytes (content_too_large)
)

// ContextItem is one item of a code channel's context bar.
type ContextItem struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Icon is one of Slack's names: branch, folder, link, terminal, code, ...
	Icon string `json:"icon,omitempty"`
	URL  string `json:"url,omitempty"`
}

// CreateCodeChannel creates (or, for the same sessionID, finds again) the
// code channel of a session started by the message originTS in
// originChannel, and returns its id. name is the channel's display name
// (Slack re-titles it from the origin message). sessionID makes the call
// idempotent on Slack's side: a retry after a crash gets the same channel.
func (p *Poster) CreateCodeChannel(ctx context.Context, name, originChannel, originTS, sessionID string) (string, error) {
	var id string
	err := p.do(ctx, originChannel, func(ctx context.Context) error {
		return p.call(ctx, originChannel, func(ctx context.Context) error {
			resp, err := p.api.CreateAgentConversationContext(ctx, truncate(name, 80),
				slack.CreateAgentConversationOptionSessionID(sessionID),
				slack.CreateAgentConversationOptionOriginChannelID(originChannel),
				slack.CreateAgentConversationOptionOriginMessageTimestamp(originTS))
			if err != nil {
				return err
			}
			id = resp.ChannelID
			return nil
		})
	})
	if err != nil {
		return "", fmt.Errorf("create code channel: %w", err)
	}
	if id == "" {
		return "", errors.New("create code channel: Slack answered no channel_id")
	}
	return id, nil
}

// SetContextBar replaces the channel's context bar with items (the first
// five).
func (p *Poster) SetContextBar(ctx context.Context, channel string, items []ContextItem) error {
	bar := make([]slack.AgentContextBarItem, 0, min(len(items), maxContextItems))
	for i, it := range items {
		if i == maxContextItems {
			break
		}
		bar = append(bar, slack.AgentContextBarItem{Key: truncate(it.Key, maxContextKey), Label: truncate(it.Label, maxContextLabel), Icon: it.Icon, URL: it.URL})
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, err := p.api.SetAgentConversationPropertiesContext(ctx, channel,
				slack.SetAgentConversationPropertiesOptionCodeChannel(slack.AgentCodeChannelProperties{ContextBarItems: bar}))
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("set context bar: %w", err)
	}
	return nil
}

// SetDiffView shows diff, a unified diff, as the channel's diff view (one
// per channel: a later call replaces it). A diff over Slack's size limit
// is not sent: the approval card links to the whole diff in brain.
func (p *Poster) SetDiffView(ctx context.Context, channel, diff, base, head string) error {
	if diff == "" || len(diff) > maxViewContent {
		return nil
	}
	opts := []slack.SetAgentConversationViewOption{
		slack.SetAgentConversationViewOptionType("diff"),
		slack.SetAgentConversationViewOptionContent(diff),
	}
	if base != "" {
		opts = append(opts, slack.SetAgentConversationViewOptionBaseBranch(base))
	}
	if head != "" {
		opts = append(opts, slack.SetAgentConversationViewOptionHeadBranch(head))
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, err := p.api.SetAgentConversationViewContext(ctx, channel, opts...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("set diff view: %w", err)
	}
	return nil
}

// ArchiveCodeChannel archives the channel once its session finished;
// summaryTS ("" none) is a message of the channel Slack shares back as a
// reply on the origin message. One already archived is not an error.
func (p *Poster) ArchiveCodeChannel(ctx context.Context, channel, summaryTS string) error {
	var opts []slack.ArchiveAgentConversationOption
	if summaryTS != "" {
		opts = append(opts, slack.ArchiveAgentConversationOptionSummaryMessageTimestamp(summaryTS))
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			return p.api.ArchiveAgentConversationContext(ctx, channel, opts...)
		})
	})
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && se.Err == "already_archived" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("archive code channel: %w", err)
	}
	return nil
}

// IsArchived reports whether err is Slack refusing a write because the
// channel is archived.
func IsArchived(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && (se.Err == "is_archived" || se.Err == "channel_is_archived" || se.Err == "already_archived")
}

// CodeChannelsRefused reports whether err is Slack refusing code channels
// for good in this workspace or for this app (a missing scope, a plan or
// an admin that does not allow them, a method Slack does not know, an
// origin channel they cannot start from), as opposed to a failure worth
// retrying (a network error, a 5xx, a rate limit waited out).
func CodeChannelsRefused(err error) bool {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return false
	}
	switch se.Err {
	case "internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited":
		return false
	}
	return true
}
