package bot

import (
	"brain/bot/api"
	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
)

var (
	_ api.Engine    = (*engine.Engine)(nil)
	_ api.Schedules = (*schedule.Scheduler)(nil)
)

// apiKeys are the config's api_keys in the API's type; the conversion
// compiles only while both have the same fields.
func apiKeys(keys []config.APIKey) []api.APIKey {
	out := make([]api.APIKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, api.APIKey(k))
	}
	return out
}
