package bot

import (
	"context"
	"path/filepath"
	"time"

	"brain/bot/config"
	"brain/bot/filestore"
	"brain/bot/slackbridge"
	"brain/channels/slack"
	"brain/engine"
)

// slackContent is what Slack sessions read besides their messages: one
// reader (threads, names, files, user groups) shared by the engine's
// approver groups and the bridge, and the store of shared files in
// data_dir/files with the engine's loader over it.
type slackContent struct {
	reader *slack.Reader
	groups *slack.Groups
	files  *filestore.Store
	loader *filestore.Loader
}

// newSlackContent builds it from the slack block; nil without one.
func newSlackContent(cfg *config.Config, now func() time.Time) (*slackContent, error) {
	s := cfg.Slack
	if s == nil {
		return nil, nil
	}
	reader := slack.NewReader(slack.NewClient(s.BotToken, "", s.APIURL), now)
	files, err := filestore.Open(filepath.Join(cfg.DataDir, "files"), s.Files.StoreBytes, now)
	if err != nil {
		return nil, err
	}
	loader := &filestore.Loader{
		Store: files,
		Fetch: map[string]filestore.Fetch{
			slackbridge.SourceSlack: func(ctx context.Context, ref engine.FileRef, max int64) ([]byte, error) {
				return reader.Download(ctx, ref.URL, max)
			},
		},
		MaxFileBytes: s.Files.MaxFileBytes,
		MaxTurnBytes: s.Files.MaxTurnBytes,
		MaxTextChars: s.Files.MaxTextChars,
	}
	return &slackContent{reader: reader, groups: slack.NewGroups(reader), files: files, loader: loader}, nil
}

// engineFiles and engineGroups are the engine's hooks; nil without Slack.
func (c *slackContent) engineFiles() engine.Files {
	if c == nil {
		return nil
	}
	return c.loader
}

func (c *slackContent) engineGroups() engine.Groups {
	if c == nil {
		return nil
	}
	return c.groups
}

// maxRequestBytes is the engine's cap on the file content of one model
// request: slack.files.max_turn_bytes; 0 without Slack.
func (c *slackContent) maxRequestBytes() int64 {
	if c == nil {
		return 0
	}
	return c.loader.MaxTurnBytes
}
