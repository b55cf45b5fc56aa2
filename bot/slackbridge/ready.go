package slackbridge

import (
	"context"
	"fmt"
	"time"
)

// Ready reports whether Slack accepts the bot token (auth.test).
func (b *Bridge) Ready(ctx context.Context) error {
	if _, err := b.poster.Identity(ctx); err != nil {
		return fmt.Errorf("slack auth.test: %w; check slack.bot_token", err)
	}
	return nil
}

// SetDeliveryObserver sets what is told how long each delivery to the
// platform took and how it ended. Call it before Start.
func (b *Bridge) SetDeliveryObserver(f func(time.Duration, error)) { b.observeDelivery = f }
