package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"brain/engine"
	"brain/store"
)

// The types below are the vocabulary of the platform contract that bot
// declares (bot/platforms.go): what a conversation platform is given and
// what it contributes. They live here so the platform packages can speak
// it without importing bot.

// Hooks are what a platform gives the engine before the engine is built.
// Every map may be nil.
type Hooks struct {
	// Files loads the files shared on the platform, keyed by the
	// engine.FileRef.Source its refs carry.
	Files map[string]engine.Files
	// FileBudget caps the file content of one model request (0: none of
	// this platform's).
	FileBudget int64
	// Groups resolves approver entries naming a group of the platform's
	// people, keyed by the entry's kind (the text before its ':').
	Groups map[string]engine.Groups
}

// Store is what every platform keeps beside the engine: thread routing,
// the durable inbox and delivery cursors. A platform that keeps more
// asserts it on the store it is given (a capability) and refuses to
// connect without it.
type Store interface {
	store.Threads
	store.Inbox
	store.DeliveryCursors
	store.PostedMessages
}

// Deps are what a platform is connected to once the engine exists.
type Deps struct {
	Engine *engine.Engine
	Store  Store
	Clock  func() time.Time
	Log    *slog.Logger
	// ObserveDelivery, when set, is told how long each delivery to the
	// platform took and how it ended.
	ObserveDelivery func(time.Duration, error)
}

// Route is an HTTP route a platform serves beside the API (a ServeMux
// pattern, such as "POST /linear/webhook"); the API mounts it, so its
// failures get the API's request ids and error envelope.
type Route struct {
	Pattern string
	Handler http.Handler
}

// Section is a platform's part of the console's status page.
type Section struct {
	Title string
	// State is "ok", "warn" or "down".
	State string
	Rows  []Row
}

// Row is one line of a Section; Items, when set, are listed under it.
type Row struct {
	Label, Value string
	Items        []string
}

// ConnectionRow is the status row of a readiness check: "connected", or
// the check's error (then sec is marked down). A nil check is "not
// started".
func ConnectionRow(ctx context.Context, check func(context.Context) error, sec *Section) Row {
	if check == nil {
		return Row{Label: "Connection", Value: "not started"}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := check(ctx); err != nil {
		sec.State = "down"
		return Row{Label: "Connection", Value: err.Error()}
	}
	return Row{Label: "Connection", Value: "connected"}
}

// OutcomeHeading is the first line of a schedule run's outcome as every
// platform posts it: the schedule, when the run fired (in the schedule's
// zone) and how it ended.
func OutcomeHeading(schedule string, fireTime time.Time, status string) string {
	return fmt.Sprintf("**%s** (scheduled run, %s, %s)", schedule, fireTime.Format("Mon 2 Jan 2006 15:04 MST"), status)
}
