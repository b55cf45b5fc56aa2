package slackbridge

import (
	"context"
	"fmt"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/channels/slack"
)

// PostOutcome posts a scheduled run's outcome (the run fired at fireTime,
// in the schedule's zone, and ended with status) as a new message in
// post_to.slack_channel and marks its thread: a reply there starts an
// interactive session that sees the outcome as context. bot wires it to
// bot/schedule's OutcomePoster.
func (b *Bridge) PostOutcome(ctx context.Context, s config.ScheduleConfig, fireTime time.Time, status, outcome string) error {
	channel := s.PostTo.SlackChannel
	if channel == "" {
		return nil
	}
	text := bridge.OutcomeHeading(slack.Literal(s.Name), fireTime, status) + "\n\n" + outcome + "\n\n_Reply in this thread to follow up._"
	tss, err := b.poster.Reply(ctx, channel, "", text)
	if err != nil || len(tss) == 0 {
		return fmt.Errorf("post outcome of %s to %s: %w", s.Name, channel, err)
	}
	b.mu.Lock()
	team := b.team
	b.mu.Unlock()
	note := fmt.Sprintf("This thread follows up on the scheduled run %q of %s (%s). Its outcome was:\n%s",
		s.Name, fireTime.Format(time.RFC3339), status, outcome)
	return b.store.SetThreadContext(ctx, b.now(), slack.Thread{Team: team, Channel: channel, TS: tss[0]}.Key(), note)
}
