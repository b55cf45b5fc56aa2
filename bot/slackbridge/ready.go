package slackbridge

import (
	"context"
	"fmt"
)

// Ready reports whether Slack accepts the bot token (auth.test).
func (b *Bridge) Ready(ctx context.Context) error {
	if _, err := b.poster.Identity(ctx); err != nil {
		return fmt.Errorf("slack auth.test: %w; check slack.bot_token", err)
	}
	return nil
}
