package governance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"brain/engine"
	"brain/store"
)

// RateLimits is engine.Pace over rate_limits: token buckets per person
// and per channel kept in the store (store.RateLimits), so a limit holds
// across a restart and across replicas. A message over a limit is never
// refused: the engine records it with the time its bucket allows and
// posts the notice below in the thread it came from.
type RateLimits struct {
	Store            store.RateLimits
	PersonPerMinute  int
	ChannelPerMinute int
}

var _ engine.Pace = (*RateLimits)(nil)

// Reserve takes a turn from the buckets of the message's author and of
// its session's channel. Schedules are not limited: their cron is their
// rate.
func (r *RateLimits) Reserve(ctx context.Context, call engine.PaceCall) (time.Time, string, error) {
	s := call.Session
	if s.Origin == engine.OriginSchedule {
		return call.Now, "", nil
	}
	var limits []string
	var buckets []store.RateLimit
	person := call.Author
	if person == "" {
		person = s.StartedBy
	}
	if r.PersonPerMinute > 0 && person != "" {
		buckets = append(buckets, store.RateLimit{Key: "person:" + person, PerMinute: r.PersonPerMinute})
		limits = append(limits, fmt.Sprintf("%d per person", r.PersonPerMinute))
	}
	if ch := channelOf(s.ThreadKey); r.ChannelPerMinute > 0 && ch != "" {
		buckets = append(buckets, store.RateLimit{Key: "channel:" + ch, PerMinute: r.ChannelPerMinute})
		limits = append(limits, fmt.Sprintf("%d per channel", r.ChannelPerMinute))
	}
	if len(buckets) == 0 {
		return call.Now, "", nil
	}
	at, err := r.Store.ReserveTurn(ctx, call.Now, buckets)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("reserve a turn: %w", err)
	}
	if !at.After(call.Now) {
		return at, "", nil
	}
	return at, Notice(at, strings.Join(limits, " and ")), nil
}

// Notice is what the person reads when a rate limit defers a message.
func Notice(at time.Time, limits string) string {
	return fmt.Sprintf("Slow down: more new turns than the rate limit allows (%s per minute). "+
		"This message is kept and will run at %s UTC.", limits, at.UTC().Format("15:04"))
}
