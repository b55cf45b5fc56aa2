package bot

import (
	"brain/bot/config"
	"brain/bot/linearbridge"
	"brain/bot/slackbridge"
	"brain/internal/startstop"
)

// Services lists the app's long-lived services in the order Start starts
// them (Shutdown stops them in reverse). Each embeds startstop.Lifecycle;
// tests stress them with startstoptest.Stress.
func (a *App) Services() []startstop.Service {
	out := make([]startstop.Service, len(a.services))
	for i, s := range a.services {
		out[i] = s
	}
	return out
}

// inboxSources are the inbox sources of the configured bridges.
func inboxSources(cfg *config.Config) []string {
	var out []string
	if cfg.Slack != nil {
		out = append(out, slackbridge.InboxSource)
	}
	if cfg.Linear != nil {
		out = append(out, linearbridge.InboxSource)
	}
	return out
}
