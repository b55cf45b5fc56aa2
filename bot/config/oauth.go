package config

import (
	"fmt"
	"strings"
)

// GitHubUserTokensConfig turns on GitHub App user access tokens: people
// connect their GitHub account (provider "github") through GitHub's web
// flow for GitHub Apps, and GitHub tools may act as them.
type GitHubUserTokensConfig struct {
	// ClientID and ClientSecret are the GitHub App's (its settings page,
	// "Client ID" and "Generate a new client secret").
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// WebURL is GitHub's web root (…/login/oauth/authorize and
	// …/login/oauth/access_token under it); empty = https://github.com.
	// GitHub Enterprise Server: https://HOST.
	WebURL string `yaml:"web_url"`
}

// Authorize and Token are GitHub's OAuth endpoints under WebURL.
func (g GitHubUserTokensConfig) Authorize() string { return g.web() + "/login/oauth/authorize" }

// Token is GitHub's token endpoint under WebURL.
func (g GitHubUserTokensConfig) Token() string { return g.web() + "/login/oauth/access_token" }

func (g GitHubUserTokensConfig) web() string {
	if g.WebURL == "" {
		return "https://github.com"
	}
	return strings.TrimSuffix(g.WebURL, "/")
}

// HTTPOAuthConfig is a tools.http tool's OAuth 2.0 provider: people (or an
// admin, for the workspace) connect through the authorization code flow
// with PKCE, and the tool sends the connection's bearer token.
type HTTPOAuthConfig struct {
	AuthorizeURL string   `yaml:"authorize_url"`
	TokenURL     string   `yaml:"token_url"`
	ClientID     string   `yaml:"client_id"`
	ClientSecret string   `yaml:"client_secret"` // ${ENV}; empty for a public client
	Scopes       []string `yaml:"scopes"`
	// Per is whose connection the tool uses: person (the person who
	// started the session) or workspace (one, connected by an admin; the
	// default).
	Per string `yaml:"per"`
}

// validateOAuthTools checks tools.github.user_tokens and tools.http[].oauth.
func (c *Config) validateOAuthTools(p *problems) {
	anyOAuth := false
	if g := c.Tools.GitHub; g != nil && g.UserTokens != nil {
		anyOAuth = true
		p.required("tools.github.user_tokens.client_id", g.UserTokens.ClientID)
		p.required("tools.github.user_tokens.client_secret", g.UserTokens.ClientSecret)
		checkURL(p, "tools.github.user_tokens.web_url", g.UserTokens.WebURL, false)
	}
	for i, h := range c.Tools.HTTP {
		o := h.OAuth
		if o == nil {
			continue
		}
		anyOAuth = true
		key := fmt.Sprintf("tools.http[%d].oauth", i)
		checkURL(p, key+".authorize_url", o.AuthorizeURL, true)
		checkURL(p, key+".token_url", o.TokenURL, true)
		p.required(key+".client_id", o.ClientID)
		if o.Per != "" {
			oneOf(p, key+".per", o.Per, "person", "workspace")
		}
		for name, v := range h.Headers {
			if strings.EqualFold(name, "Authorization") && v != "" {
				p.add(fmt.Sprintf("tools.http[%d].headers.%s", i, name), "set by oauth: remove it")
			}
		}
	}
	if anyOAuth && c.PublicURL == "" {
		p.add("public_url", "required by OAuth connections (the redirect URL is public_url + /oauth/callback)")
	}
}
