package linearbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"brain/channels/linear"
	"brain/engine"
	"brain/store"
	"brain/tools"
)

// ErrDisconnected is a Linear workspace brain has no working token for:
// never installed, or its refresh token was refused.
var ErrDisconnected = errors.New("linear workspace not connected")

// Refresh timing: a token is refreshed when less than refreshAhead of its
// life is left (at most a fifth of its lifetime, for short-lived tokens);
// a refresh lease lasts refreshLease; a process that finds the lease held
// by another looks again every leasePoll.
const (
	refreshAhead = 5 * time.Minute
	refreshLease = 30 * time.Second
	leasePoll    = 100 * time.Millisecond
)

// Tokens hands out each workspace's OAuth access token and refreshes it
// before it expires, and once when Linear refuses it. Refresh tokens
// rotate, so a workspace is refreshed by one caller at a time: in this
// process a single flight per workspace, across processes the store's
// refresh lease and compare-and-swap on the refresh token. The new pair is
// stored before it is used. Tokens never appear in its logs or errors.
type Tokens struct {
	Store   store.LinearTokens
	OAuth   linear.OAuth
	Now     func() time.Time
	Log     *slog.Logger
	Install string // the install URL, named in what to do when refused

	mu      sync.Mutex
	flights map[string]*flight
	warned  map[string]string // organization -> the refused refresh token already reported
}

type flight struct {
	done  chan struct{}
	token string
	err   error
}

// Source is the TokenSource of one workspace.
func (t *Tokens) Source(organizationID string) linear.TokenSource {
	return orgTokens{t, organizationID}
}

type orgTokens struct {
	t   *Tokens
	org string
}

func (o orgTokens) Token(ctx context.Context) (string, error) {
	return o.t.token(ctx, o.org, "")
}

func (o orgTokens) Refresh(ctx context.Context, rejected string) (string, error) {
	return o.t.token(ctx, o.org, rejected)
}

// token returns a usable access token of the workspace; rejected, when
// set, is one Linear refused: it is replaced even if not yet expired.
func (t *Tokens) token(ctx context.Context, org, rejected string) (string, error) {
	tok, err := t.current(ctx, org)
	if err != nil {
		return "", err
	}
	if !t.stale(tok, rejected) {
		return tok.AccessToken, nil
	}
	return t.refresh(ctx, org, rejected)
}

func (t *Tokens) current(ctx context.Context, org string) (store.LinearToken, error) {
	tok, err := t.Store.LinearToken(ctx, org)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return tok, fmt.Errorf("%w: workspace %s never installed the app; install it at %s", ErrDisconnected, org, t.Install)
	case err != nil:
		return tok, err
	case tok.Status == store.LinearRevoked:
		return tok, fmt.Errorf("%w: workspace %s (%s): %s; install the app again at %s", ErrDisconnected, tok.OrganizationName, org, tok.Problem, t.Install)
	}
	return tok, nil
}

// stale reports whether tok must be refreshed before use.
func (t *Tokens) stale(tok store.LinearToken, rejected string) bool {
	if rejected != "" && tok.AccessToken == rejected {
		return true
	}
	if tok.ExpiresAt.IsZero() {
		return false
	}
	ahead := refreshAhead
	if life := tok.ExpiresAt.Sub(tok.UpdatedAt); life > 0 && life/5 < ahead {
		ahead = life / 5
	}
	return !t.Now().Before(tok.ExpiresAt.Add(-ahead))
}

// refresh runs one refresh of the workspace at a time in this process:
// callers arriving meanwhile wait for its outcome.
func (t *Tokens) refresh(ctx context.Context, org, rejected string) (string, error) {
	t.mu.Lock()
	if t.flights == nil {
		t.flights = map[string]*flight{}
	}
	f, running := t.flights[org]
	if !running {
		f = &flight{done: make(chan struct{})}
		t.flights[org] = f
	}
	t.mu.Unlock()
	if !running {
		// Detached from the caller: a refresh cut off halfway could
		// spend the rotating refresh token without storing its successor.
		f.token, f.err = t.refreshOnce(context.WithoutCancel(ctx), org, rejected)
		t.mu.Lock()
		delete(t.flights, org)
		t.mu.Unlock()
		close(f.done)
	}
	select {
	case <-f.done:
		return f.token, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// refreshOnce refreshes unless another process did it first.
func (t *Tokens) refreshOnce(ctx context.Context, org, rejected string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, refreshLease)
	defer cancel()
	for {
		tok, err := t.current(ctx, org)
		if err != nil {
			return "", err
		}
		if !t.stale(tok, rejected) {
			return tok.AccessToken, nil // refreshed meanwhile, here or elsewhere
		}
		now := t.Now()
		claimed, err := t.Store.ClaimLinearRefresh(ctx, now, org, now.Add(refreshLease))
		if err != nil {
			return "", err
		}
		if !claimed {
			select { // another process is refreshing: wait for its pair
			case <-ctx.Done():
				return "", fmt.Errorf("refresh linear token of %s: waited for another process: %w", org, ctx.Err())
			case <-time.After(leasePoll):
			}
			continue
		}
		// Re-read under the lease: the pair may have changed just before.
		if tok, err = t.current(ctx, org); err != nil {
			return "", err
		}
		if !t.stale(tok, rejected) {
			_, _ = t.Store.RotateLinearToken(ctx, org, tok.RefreshToken, tok) // release the lease
			return tok.AccessToken, nil
		}
		return t.exchange(ctx, tok)
	}
}

// exchange spends tok's refresh token and stores the new pair.
func (t *Tokens) exchange(ctx context.Context, tok store.LinearToken) (string, error) {
	org := tok.OrganizationID
	g, err := t.OAuth.Refresh(ctx, tok.RefreshToken)
	now := t.Now()
	if errors.Is(err, linear.ErrGrantRefused) {
		problem := "Linear refused the refresh token (revoked, or the app was uninstalled)"
		if rerr := t.Store.RevokeLinearToken(ctx, now, org, tok.RefreshToken, problem); rerr != nil {
			return "", errors.Join(err, rerr)
		}
		t.warnOnce(tok, err)
		return "", fmt.Errorf("%w: workspace %s (%s): %s; install the app again at %s", ErrDisconnected, tok.OrganizationName, org, problem, t.Install)
	}
	if err != nil {
		// Release the lease (a no-op rotation) so the next caller may try
		// again at once rather than wait for the lease to run out.
		_, _ = t.Store.RotateLinearToken(ctx, org, tok.RefreshToken, tok)
		return "", err
	}
	next := tok
	next.AccessToken, next.RefreshToken, next.UpdatedAt = g.AccessToken, g.RefreshToken, now
	next.ExpiresAt = time.Time{}
	if g.ExpiresIn > 0 {
		next.ExpiresAt = now.Add(g.ExpiresIn)
	}
	if next.RefreshToken == "" {
		next.RefreshToken = tok.RefreshToken // not rotated this time
	}
	next.Scope = g.Scope
	swapped, err := t.Store.RotateLinearToken(ctx, org, tok.RefreshToken, next)
	if err != nil {
		return "", fmt.Errorf("store refreshed linear token of %s: %w", org, err)
	}
	if !swapped {
		// Our lease ran out and another process stored its own pair:
		// both access tokens are valid, ours for this call.
		t.Log.Warn("linear token refreshed twice; keeping the other process's pair", tools.LogOrg, org)
	}
	t.Log.Info("linear token refreshed", tools.LogOrg, org, tools.LogWorkspace, tok.OrganizationName, tools.LogExpiresAt, next.ExpiresAt)
	return next.AccessToken, nil
}

// warnOnce logs a refused refresh once per refresh token, with what to do.
func (t *Tokens) warnOnce(tok store.LinearToken, err error) {
	t.mu.Lock()
	if t.warned == nil {
		t.warned = map[string]string{}
	}
	seen := t.warned[tok.OrganizationID] == tok.RefreshToken
	t.warned[tok.OrganizationID] = tok.RefreshToken
	t.mu.Unlock()
	if !seen {
		t.Log.Error("Linear refused to refresh a workspace's token; its webhooks are kept and run once it is reconnected: install the app again",
			tools.LogOrg, tok.OrganizationID, tools.LogWorkspace, tok.OrganizationName, tools.LogInstall, t.Install, tools.LogErr, err)
	}
}
