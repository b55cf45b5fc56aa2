package slackbridge

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/bot/filestore"
	"brain/channels/slack"
	"brain/engine"
)

// Platform is Slack as bot's platform list sees it: before the engine
// exists, the content Slack sessions read besides their messages (one
// reader of threads, names, files and user groups shared by the engine's
// approver groups and the bridge; the store of shared files in
// data_dir/files with the engine's loader over it); once connected, the
// Bridge.
type Platform struct {
	*Bridge
	cfg    *config.Config
	reader *slack.Reader
	groups *slack.Groups
	files  *filestore.Store
	loader *filestore.Loader
}

// NewPlatform builds Slack's content from the slack block, which must be
// set.
func NewPlatform(cfg *config.Config, now func() time.Time) (*Platform, error) {
	s := cfg.Slack
	reader := slack.NewReader(slack.NewClient(s.BotToken, "", s.APIURL), now)
	files, err := filestore.Open(filepath.Join(cfg.DataDir, "files"), s.Files.StoreBytes, now)
	if err != nil {
		return nil, err
	}
	loader := &filestore.Loader{
		Store: files,
		Fetch: map[string]filestore.Fetch{
			SourceSlack: func(ctx context.Context, ref engine.FileRef, max int64) ([]byte, error) {
				return reader.Download(ctx, ref.URL, max)
			},
		},
		MaxFileBytes: s.Files.MaxFileBytes,
		MaxTurnBytes: s.Files.MaxTurnBytes,
		MaxTextChars: s.Files.MaxTextChars,
	}
	return &Platform{cfg: cfg, reader: reader, groups: slack.NewGroups(reader), files: files, loader: loader}, nil
}

// Name is Slack's origin, inbox source and readiness check.
func (p *Platform) Name() string { return InboxSource }

// Hooks are the file loader (files.max_turn_bytes per request) and the
// user groups ("subteam:S0123") of approver lists.
func (p *Platform) Hooks() bridge.Hooks {
	return bridge.Hooks{
		Files:      map[string]engine.Files{SourceSlack: p.loader},
		FileBudget: p.loader.MaxTurnBytes,
		Groups:     map[string]engine.Groups{strings.TrimSuffix(slack.GroupPrefix, ":"): p.groups},
	}
}

// Connect builds the bridge; the store must keep Slack's channel state.
func (p *Platform) Connect(d bridge.Deps) error {
	st, ok := d.Store.(Store)
	if !ok {
		return errors.New("slack: the store keeps no channel state")
	}
	var prompts []string
	if ac, ok := p.cfg.Agent(p.cfg.Slack.Agent); ok {
		prompts = ac.Slack.SuggestedPrompts
	}
	b := New(p.cfg.Slack, Settings{SuggestedPrompts: prompts, PublicURL: p.cfg.PublicURL}, d.Engine, st, d.Clock, d.Log, consoleLinks(p.cfg)...)
	b.SetContent(p.reader, p.files)
	b.SetDeliveryObserver(d.ObserveDelivery)
	b.SetAudience(AudienceOf(p.cfg))
	if a, ok := d.Store.(Accounts); ok && connectable(p.cfg) {
		b.SetAccounts(a)
	}
	p.Bridge = b
	return nil
}

// consoleLinks make Slack cards and notices link to the console, when it
// is on and public_url says where it is.
func consoleLinks(cfg *config.Config) []slack.Option {
	if cfg.Console.Disabled || cfg.PublicURL == "" {
		return nil
	}
	return []slack.Option{slack.WithConsoleURL(cfg.PublicURL)}
}

// Routes are the Events API and interactivity endpoints.
func (p *Platform) Routes() []bridge.Route {
	return []bridge.Route{{Pattern: "/slack/", Handler: p.HTTP()}}
}

// Warnings are none: Slack's misconfigurations fail validation or show in
// readiness.
func (p *Platform) Warnings() []string { return nil }

// SessionLink opens a session's thread in Slack ("" for a key of no
// thread).
func (p *Platform) SessionLink(s engine.Session) string {
	if t, ok := slack.ParseThread(s.ThreadKey); ok {
		return t.URL()
	}
	return ""
}

// Status is Slack's section of the console's status page: how events
// arrive and whether Slack accepts the token.
func (p *Platform) Status(ctx context.Context, connection func(context.Context) error) bridge.Section {
	sec := bridge.Section{Title: "Slack", State: "ok"}
	mode := "Events API over HTTP (/slack/events)"
	if p.cfg.Slack.AppToken != "" {
		mode = "Socket Mode"
	}
	sec.Rows = append(sec.Rows, bridge.Row{Label: "Mode", Value: mode}, bridge.ConnectionRow(ctx, connection, &sec))
	return sec
}

// FileStore is the store of files shared in Slack (retention.files and a
// person's erasure delete from it).
func (p *Platform) FileStore() *filestore.Store { return p.files }

// connectable reports whether people can connect accounts (an MCP
// server with auth: oauth): then the Home tab lists their connections.
func connectable(cfg *config.Config) bool {
	for _, m := range cfg.MCPServers {
		if m.Auth == "oauth" {
			return true
		}
	}
	return false
}
