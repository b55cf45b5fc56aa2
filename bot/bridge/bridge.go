// Package bridge is what the Slack and Linear bridges share, whatever the
// platform: the durable inbox that records inbound events before the
// platform is acknowledged (Inbox, a group commit), the worker that turns
// recorded events into session input in order (Worker), the loop that
// renders each session's new events to its platform with a durable cursor
// per session (Deliverer), and the start/stop bookkeeping of their services
// (Lifecycle).
//
// It works on engine/durable's small store interfaces and on the Engine
// interface below; it never imports a platform (channels, webhooks,
// slack-go), a store or the bot that wires it (bot/layering_test.go checks
// it).
package bridge

import (
	"context"
	"errors"

	"brain/engine"
	"brain/tools"
)

// Log attribute keys of the bridge loops.
const (
	logErr     = tools.LogErr
	logSession = tools.LogSession
	logThread  = tools.LogThreadKey
)

// Engine is what the deliverer asks of the engine; *engine.Engine has it.
type Engine interface {
	// Watch collects the ids of sessions that commit new events.
	Watch() *engine.Watcher
	Session(ctx context.Context, id string) (engine.Session, error)
	Sessions(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error)
}

var _ Engine = (*engine.Engine)(nil)

// Renderer renders one session's events on its platform: those after
// *cursor, moving *cursor past each one it rendered and calling save after
// each move, so a crash re-sends at most one message.
type Renderer interface {
	Deliver(ctx context.Context, s engine.Session, cursor *int64, save func() error) error
}

// ErrRetryLater, returned by a Worker's Handle, leaves the inbox item
// pending: it is worked again shortly.
var ErrRetryLater = errors.New("retry later")
