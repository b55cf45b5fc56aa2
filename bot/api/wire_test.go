package bot

import (
	"brain/bot/api"
	"brain/bot/schedule"
	"brain/engine"
)

var (
	_ api.Engine    = (*engine.Engine)(nil)
	_ api.Schedules = (*schedule.Scheduler)(nil)
)
