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
	// The one rule of whose connection a per-person call uses (a
	// schedule: only the service account an admin marked).
	holder, err := tools.HolderOf(ctx, u.people, tools.Call{Requester: who}, tools.ActsAsRequester, tool, githubProvider)
	if err != nil {
		return "", err
	}
	tok, err := u.connect.AccessToken(ctx, holder.Person, githubProvider)
	var nc *connect.NotConnectedError
	if errors.As(err, &nc) {
		missing := holder.Missing(tool, githubProvider)
		if required, ok := tools.AsConnectionRequired(missing); ok {
			required.Problem = nc.Problem
		}
		return "", missing
	}
	return tok, err
}
