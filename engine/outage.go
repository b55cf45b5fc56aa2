package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"brain/tools"
)

// DefaultOutageGrace is how long a turn waits out an unreachable store
// when Config.OutageGrace is zero.
const DefaultOutageGrace = 5 * time.Minute

// Backoff between attempts while the store is unreachable.
const (
	outageFirstWait = 50 * time.Millisecond
	outageMaxWait   = 2 * time.Second
)

// storeUnreachable reports whether err means the database could not be
// reached (refused or reset connections, a server shutting down or
// restarting, a busy SQLite file): the same call may succeed once it is
// back. Conflicts, fencing, not-found and invalid writes are not: they
// are answers, and retrying them blindly would be wrong.
func storeUnreachable(err error) bool {
	if err == nil || errors.Is(err, ErrFenced) || errors.Is(err, ErrNotFound) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ee *Error
	if errors.As(err, &ee) {
		return false
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		code := state.SQLState()
		// 08: connection exception; 57P01-57P03: admin or crash shutdown,
		// cannot connect now; 53300: too many connections.
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "57P0") || code == "53300"
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"database is locked", "SQLITE_BUSY", "conn closed", "failed to connect", "connection refused",
		"connection reset", "broken pipe", "unexpected EOF", "server closed the connection"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// outageStore is the engine's view of its store: the reads and commits a
// turn makes wait out an unreachable database, retrying with backoff, for
// up to grace, so acknowledged input is not cancelled by a short outage.
// A commit whose connection broke after it was sent may have been applied:
// before writing again it looks for its first event, and returns what was
// written when it finds it.
type outageStore struct {
	Store
	grace time.Duration
	log   *slog.Logger
}

// claimAfterOutage claims a session's lease with claim, waiting out an
// unreachable store as a turn's reads and commits do. A claim refused
// because the database is down would otherwise leave the session's queued
// input with no turn: nothing kicks it again (on PostgreSQL input committed
// just before or during a restart then waited forever).
func (o outageStore) claimAfterOutage(ctx context.Context, claim func() (bool, error)) (bool, error) {
	return retry(ctx, o, "claim session lease", claim)
}

// retry runs call until it succeeds, fails otherwise than unreachable, or
// the store has been unreachable for grace (then its last error).
func retry[T any](ctx context.Context, o outageStore, what string, call func() (T, error)) (T, error) {
	v, err := call()
	if !storeUnreachable(err) || o.grace <= 0 {
		return v, err
	}
	deadline := time.Now().Add(o.grace)
	wait := outageFirstWait
	o.log.Warn("store unreachable; waiting for it", tools.LogCall, what, tools.LogErr, err, tools.LogGrace, o.grace)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait = min(2*wait, outageMaxWait)
		if v, err = call(); !storeUnreachable(err) {
			if err == nil {
				o.log.Info("store reachable again", tools.LogCall, what)
			}
			return v, err
		}
	}
	o.log.Error("store still unreachable after the outage grace", tools.LogCall, what, tools.LogErr, err, tools.LogGrace, o.grace)
	return v, err
}

func (o outageStore) Session(ctx context.Context, id string) (Session, error) {
	return retry(ctx, o, "session", func() (Session, error) { return o.Store.Session(ctx, id) })
}

func (o outageStore) Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	return retry(ctx, o, "events", func() ([]Event, error) { return o.Store.Events(ctx, sessionID, after, limit) })
}

func (o outageStore) Commit(ctx context.Context, c Commit) (CommitResult, error) {
	broke := false
	return retry(ctx, o, "commit", func() (CommitResult, error) {
		if broke && len(c.Events) > 0 {
			if res, ok, err := o.applied(ctx, c); err != nil || ok {
				return res, err
			}
		}
		res, err := o.Store.Commit(ctx, c)
		broke = broke || storeUnreachable(err)
		return res, err
	})
}

// appliedWindow bounds the events applied reads back: a commit's own, plus
// those others committed to the session since.
const appliedWindow = 512

// applied looks for c's first event among the session's newest events:
// found, c was applied before its connection broke, and that is its result.
func (o outageStore) applied(ctx context.Context, c Commit) (CommitResult, bool, error) {
	s, err := o.Store.Session(ctx, c.SessionID)
	if err != nil {
		return CommitResult{}, false, err
	}
	evs, err := o.Store.Events(ctx, c.SessionID, max(0, s.LastSeq-appliedWindow), 0)
	if err != nil {
		return CommitResult{}, false, err
	}
	for i, ev := range evs {
		if ev.ID == c.Events[0].ID {
			n := min(len(c.Events), len(evs)-i)
			return CommitResult{Session: s, Events: evs[i : i+n]}, true, nil
		}
	}
	return CommitResult{}, false, nil
}

// outageGrace is Config.OutageGrace with its default.
func outageGrace(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultOutageGrace
	}
	return max(d, 0)
}
