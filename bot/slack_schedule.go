package bot

import (
	"context"
	"fmt"
	"time"

	"brain/bot/config"
	"brain/bot/schedule"
)

var _ schedule.OutcomePoster = (*slackBridge)(nil)

// PostScheduleOutcome posts a scheduled run's outcome as a new message in
// post_to.slack_channel and marks its thread: a reply there starts an
// interactive session that sees the outcome as context.
func (b *slackBridge) PostScheduleOutcome(ctx context.Context, s config.ScheduleConfig, run schedule.Run, outcome string) error {
	channel := s.PostTo.SlackChannel
	if channel == "" {
		return nil
	}
	when := run.FireTime.Format("Mon 2 Jan 2006 15:04 MST")
	text := fmt.Sprintf("**%s** (scheduled run, %s, %s)\n\n%s\n\n_Reply in this thread to follow up._", s.Name, when, run.Status, outcome)
	tss, err := b.poster.Reply(ctx, channel, "", text)
	if err != nil || len(tss) == 0 {
		return fmt.Errorf("post outcome of %s to %s: %w", s.Name, channel, err)
	}
	b.mu.Lock()
	team := b.team
	b.mu.Unlock()
	note := fmt.Sprintf("This thread follows up on the scheduled run %q of %s (%s). Its outcome was:\n%s",
		s.Name, run.FireTime.Format(time.RFC3339), run.Status, outcome)
	return b.store.SetThreadContext(ctx, b.now(), "slack:"+team+":"+channel+":"+tss[0], note)
}
