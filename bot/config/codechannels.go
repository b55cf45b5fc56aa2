package config

// SlackCodeChannels is slack.code_channels: a Slack session that starts a
// coding task moves to a Slack code channel (docs/slack.md#code-channels).
type SlackCodeChannels struct {
	Enabled bool `yaml:"enabled"` // default false
	// Archive archives the channel once the session's pull request is
	// open. Default true; see ArchivesCodeChannels.
	Archive *bool `yaml:"archive"`
}

// ArchivesCodeChannels reports code_channels.archive (default true).
func (s *SlackConfig) ArchivesCodeChannels() bool {
	return s.CodeChannels.Archive == nil || *s.CodeChannels.Archive
}
