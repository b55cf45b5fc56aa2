package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"
)

// Agent session statuses brain sets while a turn runs: Slack shows its
// Stop button on a processing session.
const (
	AgentProcessing = slack.AgentSessionStatusProcessing
	AgentActive     = slack.AgentSessionStatusActive
	// AgentClosed ends a code channel's session (before it is archived).
	AgentClosed = slack.AgentSessionStatusClosed
)

// maxTitle bounds an assistant thread's title.
const maxTitle = 200

// MaxSuggestedPrompts is how many prompts Slack shows in a new assistant
// thread.
const MaxSuggestedPrompts = 4

// startStream starts a streamed reply in the thread for user of team
// (Slack requires both outside DMs) and returns its ts.
func (p *Poster) startStream(ctx context.Context, channel, threadTS, user, team, text string, chunks []slack.StreamChunk) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionTS(threadTS)}
	if user != "" && team != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(user), slack.MsgOptionRecipientTeamID(team))
	}
	if text != "" {
		opts = append(opts, slack.MsgOptionMarkdownText(text))
	}
	if len(chunks) > 0 {
		opts = append(opts, slack.MsgOptionChunks(chunks...))
	}
	var ts string
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) (err error) {
			_, ts, err = p.api.StartStreamContext(ctx, channel, opts...)
			return err
		})
	})
	if err != nil {
		return "", fmt.Errorf("start stream: %w", err)
	}
	return ts, nil
}

// appendStream adds text and chunks to a streamed reply.
func (p *Poster) appendStream(ctx context.Context, channel, ts, text string, chunks []slack.StreamChunk) error {
	var opts []slack.MsgOption
	if text != "" {
		opts = append(opts, slack.MsgOptionMarkdownText(text))
	}
	if len(chunks) > 0 {
		opts = append(opts, slack.MsgOptionChunks(chunks...))
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, _, err := p.api.AppendStreamContext(ctx, channel, ts, opts...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("append stream: %w", err)
	}
	return nil
}

// stopStream ends a streamed reply, with blocks under it (none: nil).
func (p *Poster) stopStream(ctx context.Context, channel, ts string, blocks ...slack.Block) error {
	var opts []slack.MsgOption
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, _, err := p.api.StopStreamContext(ctx, channel, ts, opts...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("stop stream: %w", err)
	}
	return nil
}

// SetAgentStatus sets the thread's agent session status (AgentProcessing
// while a turn runs, AgentActive after).
func (p *Poster) SetAgentStatus(ctx context.Context, channel, threadTS, status string) error {
	params := slack.AgentSessionSetStatusParameters{Status: status, ChannelID: channel, ThreadTS: threadTS}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, err := p.api.SetAgentSessionStatusContext(ctx, params)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("set agent session status: %w", err)
	}
	return nil
}

// SetTitle titles an assistant thread (cut to 200 characters).
func (p *Poster) SetTitle(ctx context.Context, channel, threadTS, title string) error {
	params := slack.AssistantThreadsSetTitleParameters{ChannelID: channel, ThreadTS: threadTS, Title: truncate(title, maxTitle)}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			return p.api.SetAssistantThreadsTitleContext(ctx, params)
		})
	})
	if err != nil {
		return fmt.Errorf("set thread title: %w", err)
	}
	return nil
}

// SetSuggestedPrompts offers prompts (at most MaxSuggestedPrompts) in a
// new assistant thread; each is its own title and message.
func (p *Poster) SetSuggestedPrompts(ctx context.Context, channel, threadTS string, prompts []string) error {
	params := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: channel, ThreadTS: threadTS}
	for i, pr := range prompts {
		if i == MaxSuggestedPrompts {
			break
		}
		params.AddPrompt(truncate(pr, 75), pr)
	}
	if len(params.Prompts) == 0 {
		return nil
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			return p.api.SetAssistantThreadsSuggestedPromptsContext(ctx, params)
		})
	})
	if err != nil {
		return fmt.Errorf("set suggested prompts: %w", err)
	}
	return nil
}
