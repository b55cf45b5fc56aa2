package slack

import (
	"context"
	"strings"

	"github.com/slack-go/slack"
)

// NewClient builds the slack-go Web API client from the configured tokens:
// botToken for the Web API, appToken (may be empty) for Socket Mode, and
// apiURL (empty: Slack's own) for a fake Slack in tests.
func NewClient(botToken, appToken, apiURL string) *slack.Client {
	var opts []slack.Option
	if apiURL != "" {
		opts = append(opts, slack.OptionAPIURL(strings.TrimSuffix(apiURL, "/")+"/"))
	}
	if appToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(appToken))
	}
	return slack.New(botToken, opts...)
}

// Identity is who the bot is in its workspace.
type Identity struct {
	UserID string // the bot's user (U...)
	TeamID string
	Team   string // the workspace's name
	BotID  string // the bot's id (B...), on messages it posted
	URL    string // the workspace's URL, for links to threads
}

// Identity asks Slack who the bot token belongs to (auth.test).
func (p *Poster) Identity(ctx context.Context) (Identity, error) {
	auth, err := p.api.AuthTestContext(ctx)
	if err != nil {
		return Identity{}, err
	}
	return Identity{UserID: auth.UserID, TeamID: auth.TeamID, Team: auth.Team, BotID: auth.BotID, URL: auth.URL}, nil
}
