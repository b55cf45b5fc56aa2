package linearbridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/channels/linear"
	"brain/store"
)

// PostOutcome posts a finished schedule run's outcome as a comment on the
// schedule's post_to.linear_issue, with a comment id derived from the
// schedule and fire time: a retry, or a second watcher of the same run,
// never posts it twice. The issue is looked for in each connected
// workspace (and with the static token).
func (b *Bridge) PostOutcome(ctx context.Context, s config.ScheduleConfig, fireTime time.Time, status, outcome string) error {
	identifier := s.PostTo.LinearIssue
	if identifier == "" {
		return nil
	}
	clients, err := b.allClients(ctx)
	if err != nil {
		return err
	}
	body := bridge.OutcomeHeading(s.Name, fireTime, status) + "\n\n" + outcome
	id := linear.ActivityID("schedule-outcome", s.Name, fireTime.UTC().Format(time.RFC3339Nano))
	var errs []error
	for _, c := range clients {
		is, err := c.Issue(ctx, identifier)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := c.Comment(ctx, id, is.ID, body); err != nil {
			return fmt.Errorf("post outcome of %s to %s: %w", s.Name, identifier, err)
		}
		return nil
	}
	return fmt.Errorf("post outcome of %s: issue %s not found in any connected Linear workspace: %w", s.Name, identifier, errors.Join(errs...))
}

// allClients returns a client per connected workspace, then the static
// token's.
func (b *Bridge) allClients(ctx context.Context) ([]*linear.Client, error) {
	var out []*linear.Client
	if b.cfg.OAuth() {
		toks, err := b.store.LinearTokens(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range toks {
			if t.Status != store.LinearConnected {
				continue
			}
			c, err := b.client(ctx, t.OrganizationID)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	if b.static != nil {
		out = append(out, b.static)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no Linear workspace installed the app; install it at %s", ErrDisconnected, b.publicURL+InstallPath)
	}
	return out, nil
}
