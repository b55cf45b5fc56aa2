package bridge

import (
	"context"
	"sync"

	"brain/engine"
	"brain/engine/lease"
)

// Leaser claims a session's delivery lease among the replicas sharing the
// store; the engine's LeaseDelivery.
type Leaser interface {
	LeaseDelivery(ctx context.Context, origin engine.Origin, sessionID string) (release func(), held bool, err error)
}

// Claims shares this replica's claim on a lease among its own holders:
// the deliverer's passes, and what keeps a session's delivery on this
// replica for longer than one pass (a reply streaming into its thread,
// which only the replica running the turn can write). The engine refuses
// a second claim on one key from its own process; Claims counts holders
// instead and lets the lease go when the last of them releases it.
type Claims struct {
	Leaser Leaser

	// mu is held across the engine's claim, so two holders here never
	// race for one lease (the loser would think another replica has it).
	mu   sync.Mutex
	held map[string]*claim
}

type claim struct {
	holders int
	release func()
}

// Acquire claims the delivery of origin's session, or joins this
// replica's claim on it; held is false when another replica holds it.
// release must be called exactly once.
func (c *Claims) Acquire(ctx context.Context, origin engine.Origin, sessionID string) (release func(), held bool, err error) {
	key := lease.DeliveryKey(string(origin), sessionID)
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.held[key]
	if cl == nil {
		rel, held, err := c.Leaser.LeaseDelivery(ctx, origin, sessionID)
		if err != nil || !held {
			return func() {}, false, err
		}
		if c.held == nil {
			c.held = map[string]*claim{}
		}
		cl = &claim{release: rel}
		c.held[key] = cl
	}
	cl.holders++
	var once sync.Once
	return func() { once.Do(func() { c.drop(key, cl) }) }, true, nil
}

func (c *Claims) drop(key string, cl *claim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl.holders--
	if cl.holders > 0 {
		return
	}
	if c.held[key] == cl {
		delete(c.held, key)
	}
	cl.release()
}
