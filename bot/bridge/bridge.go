// Package bridge is what the Slack and Linear bridges share, whatever the
// platform: the durable inbox that records inbound events before the
// platform is acknowledged (Inbox, a group commit), the worker that turns
// recorded events into session input in order (Worker), the loop that
// renders each session's new events to its platform with a durable cursor
// per session (Deliverer). Its services embed internal/startstop's Lifecycle.
//
// It works on package store's small interfaces and on the Engine
// interface below; it never imports a platform (channels, webhooks,
// slack-go), a store driver or the bot that wires it (bot/layering_test.go checks
// it).
package bridge

import (
	"context"
	"errors"

	"brain/engine"
)

// Engine is what the deliverer asks of the engine; *engine.Engine has it.
type Engine interface {
	// Watch collects the ids of sessions that commit new events.
	Watch() *engine.Watcher
	engine.Sessions
	engine.Log
	// Replica's ReplicaID and LeaseTTL name the inbox worker's claims.
	engine.Replica
}

var _ Engine = (*engine.Engine)(nil)

// Renderer renders a session's events on its platform, one at a time and
// in order; the Deliverer moves the session's cursor past each event once
// Render returns nil, so a crash re-renders at most one event. An error
// leaves the cursor on the event before, to be rendered again later.
type Renderer interface {
	Render(ctx context.Context, s engine.Session, ev engine.Event) error
}

// ErrRetryLater, returned by a Worker's Handle, leaves the inbox item
// pending: it is worked again shortly.
var ErrRetryLater = errors.New("retry later")
