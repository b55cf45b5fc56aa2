package slackbridge

import (
	"context"
	"errors"
	"fmt"

	"brain/bot/bridge"
	"brain/channels/slack"
	"brain/engine"
)

// SendConnectLink shows user alone, in the session's thread, the button
// that connects their account to provider (a tool call needed it).
func (b *Bridge) SendConnectLink(ctx context.Context, s engine.Session, user, tool, provider, url string) error {
	t, ok := slack.ParseThread(s.ThreadKey)
	if !ok {
		return fmt.Errorf("session %s has no Slack thread", s.ID)
	}
	return b.poster.ConnectLink(ctx, t.Channel, user, t.TS, tool, provider, url)
}

// SayConnected says in the session's thread that user connected
// provider, with a Retry button for the call that needed it.
func (b *Bridge) SayConnected(ctx context.Context, s engine.Session, user, provider, callID, tool string) error {
	t, ok := slack.ParseThread(s.ThreadKey)
	if !ok {
		return fmt.Errorf("session %s has no Slack thread", s.ID)
	}
	return b.poster.Connected(ctx, t.Channel, t.TS, user, provider, s.ID, callID, tool)
}

// retryCall answers the Retry under a "connected" notice: the session
// gets, once per call (the idempotency key), an input from the person who
// connected asking for the call again. The model sends it again with its
// arguments, now with their connection.
func (b *Bridge) retryCall(ctx context.Context, v slack.ButtonValue, user string, notify func(string) error) error {
	if user != v.User {
		return notify(fmt.Sprintf("Only <@%s> can retry this call: it runs with their connection.", v.User))
	}
	s, err := b.eng.Session(ctx, v.Session)
	if err != nil {
		return notify("This session no longer exists.")
	}
	dup, err := b.router.Send(ctx, s, engine.Input{
		Text:           RetryText(v.Tool),
		Author:         user,
		IdempotencyKey: "slack-retry-call:" + v.Session + ":" + v.Message,
	})
	switch {
	case errors.Is(err, engine.ErrOverloaded):
		return bridge.ErrRetryLater
	case err != nil:
		return explain(err, notify)
	case dup:
		return notify("This call was retried already.")
	}
	return nil
}

// RetryText is the input a retry after connecting sends to the session.
func RetryText(tool string) string {
	return fmt.Sprintf("retry: I connected my account. Run the `%s` call that needed it again, once, with the same arguments.", tool)
}
