package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"brain/bot/api"
)

// remoteReadyTTL is how long a remote check's success is trusted, so
// frequent probes do not turn into a stream of calls to a platform. A
// failure is never cached: the next probe asks again, and readiness comes
// back as soon as the dependency does.
const remoteReadyTTL = 30 * time.Second

// registerReadiness gives /readyz the checks of what New built: the
// database gates; each platform, the MCP servers and the schedules are
// integrations, reported and never gating.
func (a *App) registerReadiness(clock func() time.Time, mcps *mcpCatalog) {
	a.api.AddReadinessCheck(api.ReadinessCheck{Name: "database", Check: func(ctx context.Context) error {
		return a.store.CheckWritable(ctx, clock())
	}})
	for _, p := range a.platforms {
		a.api.AddReadinessCheck(api.ReadinessCheck{Name: p.Name(), Check: cacheSuccess(clock, remoteReadyTTL, p.Ready), Integration: true})
	}
	if mcps != nil {
		a.api.AddReadinessCheck(api.ReadinessCheck{Name: "mcp", Check: mcps.Ready, Integration: true})
	}
	a.api.AddReadinessCheck(api.ReadinessCheck{Name: "schedules", Check: a.schedules.Ready, Integration: true})
}

// cacheSuccess wraps check so that a success is reused for ttl.
func cacheSuccess(clock func() time.Time, ttl time.Duration, check func(context.Context) error) func(context.Context) error {
	var mu sync.Mutex
	var okUntil time.Time
	return func(ctx context.Context) error {
		mu.Lock()
		fresh := clock().Before(okUntil)
		mu.Unlock()
		if fresh {
			return nil
		}
		if err := check(ctx); err != nil {
			return err
		}
		mu.Lock()
		okUntil = clock().Add(ttl)
		mu.Unlock()
		return nil
	}
}

// Ready reports the MCP servers that are not connected.
func (c *mcpCatalog) Ready(ctx context.Context) error {
	c.mu.RLock()
	b := c.bridge
	c.mu.RUnlock()
	if b == nil {
		return errors.New("not connected yet (brain is starting)")
	}
	if down := b.Disconnected(); len(down) > 0 {
		return fmt.Errorf("not connected: %s (retried in the background; see the log)", strings.Join(down, ", "))
	}
	return nil
}
