package bot

import (
	"brain/bot/schedule"
	"brain/engine"
)

// What an embedder or a test reaches of a built App.

// Engine is the app's engine, for embedding and tests.
func (a *App) Engine() *engine.Engine { return a.engine }

// Schedules is the app's scheduler.
func (a *App) Schedules() *schedule.Scheduler { return a.schedules }

// SetOutcomePoster sets what posts schedule outcomes to post_to targets
// instead of the platforms. Call it between New and Start.
func (a *App) SetOutcomePoster(p schedule.OutcomePoster) { a.schedules.SetOutcomePoster(p) }

// Addr is the address the API listens on, once started.
func (a *App) Addr() string {
	if a.listener == nil {
		return ""
	}
	return a.listener.Addr().String()
}
