package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"brain/internal/oauthclient"
	"brain/internal/startstop"
	"brain/tools"
)

// Defaults of the refresh worker.
const (
	// RefreshEvery is how often the worker looks for connections about
	// to expire.
	RefreshEvery = 5 * time.Minute
	// RefreshAhead is how far ahead it looks: more than RefreshEvery, so a
	// token is refreshed at least once before it lapses, by a pass of the
	// worker rather than by the tool call that needs it.
	RefreshAhead = 15 * time.Minute
	// refreshBatch bounds the connections one pass refreshes.
	refreshBatch = 100
)

// Refresher is the refresh worker: every Every it refreshes the
// connections whose access token expires within Ahead, so a tool acting
// as a person rarely waits on a refresh (GitHub user tokens last 8
// hours). Every replica runs one; each connection is refreshed once
// across them all, by whoever takes its refresh lease, and the others
// use the stored result (Tokens.Rotate). A connection whose refresh
// token has expired is marked revoked, with the problem the person is
// told the next time a tool needs it.
type Refresher struct {
	Service *Service
	Every   time.Duration // 0 = RefreshEvery
	Ahead   time.Duration // 0 = RefreshAhead
	Log     *slog.Logger

	life startstop.Lifecycle
}

// Start runs a pass at once, then one every Every, until Stop.
func (r *Refresher) Start(ctx context.Context) error {
	return r.life.Start(ctx, func(context.Context) error {
		r.life.Go(r.loop)
		return nil
	})
}

// Stop ends the worker and waits for it until ctx is done. Safe before
// Start, twice and concurrently.
func (r *Refresher) Stop(ctx context.Context) error {
	return r.life.Stop(ctx, nil)
}

func (r *Refresher) loop(ctx context.Context) {
	every := r.Every
	if every <= 0 {
		every = RefreshEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if _, err := r.RefreshDue(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("refreshing connections failed", tools.LogErr, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// RefreshDue is one pass: it refreshes (or, for an expired refresh
// token, revokes) every connection expiring within Ahead, and returns
// how many this process refreshed. A connection another replica is
// refreshing is left to it; failures of some connections do not stop
// the others and are returned together.
func (r *Refresher) RefreshDue(ctx context.Context) (int, error) {
	s := r.Service
	ahead := r.Ahead
	if ahead <= 0 {
		ahead = RefreshAhead
	}
	cs, err := s.Store.ExpiringConnections(ctx, s.Now().Add(ahead), refreshBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, c := range cs {
		p, ok := s.Providers[c.Provider]
		if !ok || c.RefreshToken == "" {
			continue // a provider no longer configured, or nothing to refresh with
		}
		t := s.Tokens(c.PersonID, c.Provider)
		_, here, err := s.rotate(ctx, p, t, tokenOf(c))
		switch {
		case err == nil:
			if here {
				n++
			}
		case errors.Is(err, errRefreshHeld), errors.Is(err, oauthclient.ErrRefused), errors.Is(err, oauthclient.ErrNoToken):
			// Another replica holds it, or it is revoked now (logged once
			// by Rotate; the person is told when a tool needs it).
		default:
			errs = append(errs, fmt.Errorf("refresh connection %s (%s): %w", c.ID, c.Provider, err))
		}
	}
	return n, errors.Join(errs...)
}
