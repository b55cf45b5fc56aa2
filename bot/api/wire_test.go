package api_test

// The engine and the scheduler are what the API serves; bot wires them in.

import (
	"brain/bot/api"
	"brain/bot/schedule"
	"brain/engine"
)

var (
	_ api.Engine    = (*engine.Engine)(nil)
	_ api.Schedules = (*schedule.Scheduler)(nil)
)
