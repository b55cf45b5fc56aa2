package bot

import (
	"context"
	"log/slog"
	"time"

	"brain/internal/startstop"
	"brain/store"
)

// liveFeed tells the engine's hub about commits other replicas make to
// the shared database (on PostgreSQL, LISTEN/NOTIFY, polling while
// that is down), so event streams, deliveries and anything watching a session see
// them as they see local ones, and passes on other replicas' requests to
// stop a turn running here. It is a service of its own beside the hub:
// the hub stays in-process.
type liveFeed struct {
	store store.Replicated
	feed  store.Feed
	poll  time.Duration
	log   *slog.Logger

	life startstop.Lifecycle
}

// Start follows the feed until Stop.
func (f *liveFeed) Start(ctx context.Context) error {
	return f.life.Start(ctx, func(context.Context) error {
		f.life.Go(func(ctx context.Context) { f.store.Changes(ctx, f.poll, f.log, f.feed) })
		return nil
	})
}

// Stop ends the feed and waits for it until ctx is done. Safe before
// Start, twice and concurrently.
func (f *liveFeed) Stop(ctx context.Context) error {
	return f.life.Stop(ctx, nil)
}
