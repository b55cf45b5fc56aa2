package slackbridge

import (
	"brain/bot/config"
	"brain/channels/slack"
)

// AudienceOf is approvals.notify for Slack: the approvers' channel, and
// with dm_approvers each agent's approvers (its own, else approvals.approvers).
func AudienceOf(cfg *config.Config) slack.Audience {
	n := cfg.Approvals.Notify
	aud := slack.Audience{Channel: n.SlackChannel}
	if n.DMApprovers {
		approvers := map[string][]string{}
		for _, a := range cfg.Agents {
			approvers[a.Name] = a.Approvers
		}
		aud.DMs = func(agent string) []string { return approvers[agent] }
	}
	return aud
}
