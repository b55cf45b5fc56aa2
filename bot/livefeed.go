package bot

import (
	"context"
	"log/slog"
	"sync"
	"time"

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

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (f *liveFeed) Start(context.Context) error {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.store.Changes(ctx, f.poll, f.log, f.feed)
	}()
	return nil
}

func (f *liveFeed) Stop(context.Context) error {
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	return nil
}
