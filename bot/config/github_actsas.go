package config

import (
	"sort"
	"strings"
)

// validateGitHubActsAs checks tools.github.acts_as: each value is app,
// requester or approver, each key "default" or a github_* tool name, and
// acting as a person needs user_tokens. Which tool may act as whom (a
// read cannot act as an approver, github_propose_change acts as the App)
// the tool family checks when it is built (brain config check too).
func validateGitHubActsAs(p *problems, g *GitHubConfig) {
	keys := make([]string, 0, len(g.ActsAs))
	for k := range g.ActsAs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	person := false
	for _, k := range keys {
		key := "tools.github.acts_as." + k
		if k != "default" && !strings.HasPrefix(k, "github_") {
			p.add(key, "not a GitHub tool: name a github_* tool or default")
		}
		switch v := g.ActsAs[k]; v {
		case "app":
		case "requester", "approver":
			person = true
		default:
			p.add(key, "must be one of app, requester, approver, got %q", v)
		}
	}
	if person && g.UserTokens == nil {
		p.add("tools.github.acts_as", "acting as a person (requester, approver) needs tools.github.user_tokens: "+
			"people connect their GitHub account and the tools use its user access token")
	}
}
