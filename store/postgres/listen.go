package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"brain/store"
	"brain/tools"
)

// notifyChannel is the channel migration 0010's trigger notifies;
// turnsChannel carries requests to stop a turn (StopTurn).
const (
	notifyChannel = "brain_events"
	turnsChannel  = "brain_turns"
)

// StopTurn asks every process listening with Changes to stop the
// session's running turn (interrupted by new input, or cancelled). The
// request is not durable: only processes listening now receive it.
func (s *Store) StopTurn(ctx context.Context, sessionID string, interrupt bool) error {
	verb := "cancel"
	if interrupt {
		verb = "interrupt"
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, turnsChannel, verb+" "+sessionID); err != nil {
		return interpretError("stop turn of "+sessionID, err)
	}
	return nil
}

// pollLag is how far back a poll looks past its watermark: commits are
// stamped with each replica's clock, which may lag this one's.
const pollLag = 5 * time.Second

// Changes reports the sessions other processes (and this one) commit
// events to, by calling changed with each session's id, until ctx ends.
// It LISTENs on a connection of its own; while that connection is down
// (or LISTEN is refused, as behind a transaction-pooling proxy) it polls
// the sessions' updated_at every poll, and after every reconnect it polls
// once for what the outage hid. A session may be reported more than once,
// or for a commit of its own: changed must be cheap and idempotent (the
// engine's hub is).
func (s *Store) Changes(ctx context.Context, poll time.Duration, log *slog.Logger, feed store.Feed) {
	s.changes(ctx, poll, log, feed, func() {})
}

// changes is Changes, calling listening each time LISTEN is in place.
func (s *Store) changes(ctx context.Context, poll time.Duration, log *slog.Logger, feed store.Feed, listening func()) {
	changed := feed.Changed
	p := &poller{store: s, seen: map[string]int64{}, since: time.Now().Add(-pollLag)}
	backoff := poll
	for ctx.Err() == nil {
		err := s.listen(ctx, func() { p.poll(ctx, changed, log); listening() }, feed)
		if ctx.Err() != nil {
			return
		}
		log.Warn("live updates: LISTEN failed; polling until it is back", tools.LogRetryIn, backoff.String(), tools.LogErr, err)
		// Poll until the next attempt to listen.
		deadline := time.Now().Add(backoff)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			p.poll(ctx, changed, log)
			select {
			case <-time.After(poll):
			case <-ctx.Done():
			}
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// listen holds a LISTEN connection until it fails or ctx ends; listening
// is called once LISTEN is in place (to catch up by polling).
func (s *Store) listen(ctx context.Context, listening func(), feed store.Feed) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel+"; LISTEN "+turnsChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("wait for notification: %w", err)
		}
		switch {
		case n.Payload == "":
		case n.Channel == notifyChannel:
			feed.Changed(n.Payload)
		case n.Channel == turnsChannel && feed.StopTurn != nil:
			verb, id, ok := strings.Cut(n.Payload, " ")
			if ok && id != "" && (verb == "cancel" || verb == "interrupt") {
				feed.StopTurn(id, verb == "interrupt")
			}
		}
	}
}

// poller finds sessions changed since its watermark by their updated_at,
// remembering the last_seq it reported so a session is reported once per
// change.
type poller struct {
	store *Store
	since time.Time
	seen  map[string]int64 // session id -> last_seq reported
}

func (p *poller) poll(ctx context.Context, changed func(string), log *slog.Logger) {
	if err := p.pollOnce(ctx, changed); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		log.Warn("live updates: poll sessions", tools.LogErr, err)
	}
}

func (p *poller) pollOnce(ctx context.Context, changed func(string)) error {
	rows, err := p.store.pool.Query(ctx,
		`SELECT id, last_seq, updated_at FROM sessions WHERE updated_at >= $1 ORDER BY updated_at`,
		formatTime(p.since.Add(-pollLag)))
	if err != nil {
		return err
	}
	defer rows.Close()
	newest := p.since
	var ids []string
	for rows.Next() {
		var (
			id      string
			seq     int64
			updated string
		)
		if err := rows.Scan(&id, &seq, &updated); err != nil {
			return err
		}
		t, err := parseTime(updated)
		if err != nil {
			return err
		}
		if t.After(newest) {
			newest = t
		}
		if p.seen[id] != seq {
			p.seen[id] = seq
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	p.since = newest
	// Bound the memory: past 10,000 sessions the record starts over (the
	// sessions of the look-back window are reported once more).
	if len(p.seen) > 10000 {
		clear(p.seen)
	}
	for _, id := range ids {
		changed(id)
	}
	return nil
}
