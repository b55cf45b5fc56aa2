package slackbridge

import (
	"context"
	"errors"
	"fmt"

	"brain/bot/bridge"
	"brain/channels/slack"
	"brain/engine"
	"brain/tools"
	"brain/webhooks/slackhook"
)

// onStop handles Slack's own Stop (agent_session_stopped): the turn is
// cancelled like the API's cancel, and the thread says who stopped it.
func (b *Bridge) onStop(ctx context.Context, threadKey string, a slackhook.Agent) error {
	s, err := b.store.SessionByThread(ctx, threadKey)
	if errors.Is(err, engine.ErrNotFound) {
		return nil // a thread brain does not run
	}
	if err != nil {
		return err
	}
	return b.stop(ctx, s.ID, a.Channel, a.ThreadTS, a.User, func(text string) error {
		return b.poster.Ephemeral(ctx, a.Channel, a.User, a.ThreadTS, text)
	})
}

// stop cancels the session's turn for user, if user may, and says so in
// the thread; a second stop finds nothing running and posts nothing.
func (b *Bridge) stop(ctx context.Context, sessionID, channel, threadTS, user string, notify func(string) error) error {
	_, stopped, err := b.eng.StopFor(ctx, sessionID, user)
	var ee *engine.Error
	switch {
	case errors.As(err, &ee) && ee.Code == engine.CodeForbidden:
		return notify(mentions(slack.Escape(engine.ErrorMessage(err))))
	case errors.Is(err, engine.ErrNotFound):
		return notify("This session no longer exists.")
	case errors.Is(err, engine.ErrOverloaded):
		return bridge.ErrRetryLater
	case err != nil:
		return err
	case !stopped:
		return notify("Nothing is running in this thread.")
	}
	_, err = b.poster.Reply(ctx, channel, threadTS, fmt.Sprintf(":octagonal_sign: Stopped by <@%s>.", user))
	return err
}

// onThreadStarted offers the agent's suggested prompts in a new assistant
// thread. Slack may refuse (an app without the assistant view): that
// changes nothing else, so it is logged and dropped.
func (b *Bridge) onThreadStarted(ctx context.Context, a slackhook.Agent) error {
	if len(b.prompts) == 0 {
		return nil
	}
	if err := b.poster.SetSuggestedPrompts(ctx, a.Channel, a.ThreadTS, b.prompts); err != nil {
		b.log.Warn("slack refused suggested prompts", tools.LogErr, err)
	}
	return nil
}

// titleThread names a new assistant thread after its first request.
func (b *Bridge) titleThread(ctx context.Context, m slackhook.Message) {
	if err := b.poster.SetTitle(ctx, m.Channel, m.ThreadTS, m.Text); err != nil {
		b.log.Debug("slack refused the thread title", tools.LogErr, err)
	}
}
