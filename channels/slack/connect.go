package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"
)

// ActionRetryCall runs again, once, a tool call that needed the
// clicker's connection, after they connected.
const ActionRetryCall = "brain_retry_call"

// ActionConnect is the connect link button (a URL button: Slack opens
// the link and still sends the click, which needs no answer).
const ActionConnect = "brain_connect"

// ConnectLink shows user alone, in the thread, a button that opens the
// link connecting their account to provider: the link is bound to them,
// so it is never posted where others see it.
func (p *Poster) ConnectLink(ctx context.Context, channel, user, threadTS, tool, provider, url string) error {
	text := fmt.Sprintf("`%s` needs your own connection to *%s* (missing, revoked or short of scope); nothing was sent. "+
		"Connect it, then retry.", Escape(tool), Escape(provider))
	btn := slack.NewButtonBlockElement(ActionConnect, provider, plain("Connect "+provider))
	btn.URL = url
	btn.Style = slack.StylePrimary
	blocks := []slack.Block{section(p.blockID("connect"), text), slack.NewActionBlock(p.blockID("connect-link"), btn)}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, err := p.api.PostEphemeralContext(ctx, channel, user, opts...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("post connect link to %s: %w", user, err)
	}
	return nil
}

// Connected says in the thread that user connected provider, with a
// Retry button that runs the call that needed it again (only user may).
func (p *Poster) Connected(ctx context.Context, channel, threadTS, user, provider, sessionID, callID, tool string) error {
	text := fmt.Sprintf("<@%s> connected *%s*. Retry runs `%s` again (or reply `retry`).", Escape(user), Escape(provider), Escape(tool))
	blocks := []slack.Block{section(p.blockID("connected"), text)}
	if sessionID != "" {
		v, err := encodeValue(ButtonValue{Session: sessionID, Message: callID, Tool: tool, User: user})
		if err != nil {
			return err
		}
		blocks = append(blocks, slack.NewActionBlock(p.blockID("retry-call"),
			slack.NewButtonBlockElement(ActionRetryCall, v, plain("Retry"))))
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	if _, err := p.post(ctx, channel, opts...); err != nil {
		return fmt.Errorf("post connected notice: %w", err)
	}
	return nil
}
