package bot

import (
	"context"
	"errors"
	"fmt"

	"brain/bot/config"
	"brain/bot/connect"
	"brain/tools"
	ghtools "brain/tools/github"
)

// githubTools builds the github_* family; users gives people's GitHub
// user tokens to the tools that act as a person (tools.github.acts_as).
func githubTools(cfg *config.Config, users ghtools.UserTokens) ([]tools.Definition, error) {
	ghc, err := githubConfig(cfg)
	if err != nil {
		return nil, err
	}
	ghc.UserTokens = users
	defs, err := ghtools.Tools(ghc)
	if err != nil {
		return nil, fmt.Errorf("tools.github: %w", err)
	}
	return defs, nil
}

// githubUsers is ghtools.UserTokens over the people and their "github"
// connections (GitHub App user access tokens, refreshed once across
// replicas by connect.Service.AccessToken). A person who has none is a
// tools.ConnectionRequired: withConnectLinks sends them the link.
type githubUsers struct {
	connect *connect.Service // nil: user tokens are not configured
	people  tools.People
}

var _ ghtools.UserTokens = githubUsers{}

// UserToken implements ghtools.UserTokens.
func (u githubUsers) UserToken(ctx context.Context, tool string, who tools.Identity) (string, error) {
	if u.connect == nil {
		return "", errors.New("GitHub user tokens are not configured (tools.github.user_tokens)")
	}
	if _, ok := u.connect.Providers[githubProvider]; !ok {
		return "", errors.New("GitHub user tokens are not configured (tools.github.user_tokens)")
	}
	person, ok, err := u.people.PersonOf(ctx, who)
	if err != nil {
		return "", fmt.Errorf("look up %s: %w", who, err)
	}
	required := &tools.ConnectionRequired{Tool: tool, Provider: githubProvider, Person: person, Identity: who}
	if !ok {
		return "", required
	}
	tok, err := u.connect.AccessToken(ctx, person, githubProvider)
	var nc *connect.NotConnectedError
	if errors.As(err, &nc) {
		required.Problem = nc.Problem
		return "", required
	}
	return tok, err
}
