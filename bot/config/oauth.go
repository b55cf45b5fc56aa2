package config

import (
	"fmt"
	"net/url"
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
	AuthorizeURL string `yaml:"authorize_url"`
	TokenURL     string `yaml:"token_url"`
	// Issuer is the authorization server's issuer identifier: a server
	// that names itself on the redirect back (RFC 9207's iss) must name
	// this one, or the connection is refused (a mix-up defence). Empty:
	// the origin of authorize_url (https://HOST), which is most servers'.
	Issuer       string   `yaml:"issuer"`
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
		checkHTTPActsAs(p, i, h)
		if o == nil {
			continue
		}
		anyOAuth = true
		key := fmt.Sprintf("tools.http[%d].oauth", i)
		checkURL(p, key+".authorize_url", o.AuthorizeURL, true)
		checkURL(p, key+".token_url", o.TokenURL, true)
		checkURL(p, key+".issuer", o.Issuer, false)
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

// checkHTTPActsAs checks tools.http[].acts_as, as mcp_servers[].acts_as:
// only a tool with oauth per: person acts as a person.
func checkHTTPActsAs(p *problems, i int, h HTTPToolConfig) {
	key := fmt.Sprintf("tools.http[%d].acts_as", i)
	switch {
	case h.OAuth == nil || h.OAuth.Per != "person":
		if h.ActsAs != "" && h.ActsAs != "app" {
			p.add(key, "only a tool with oauth per: person acts as a person (requester or approver); others act as the app, got %q", h.ActsAs)
		}
	case h.ActsAs == "app":
		p.add(key, "an oauth per: person tool has no connection of the app's own: use requester or approver")
	case h.ActsAs != "" && h.ActsAs != "requester" && h.ActsAs != "approver":
		p.add(key, "must be requester or approver, got %q", h.ActsAs)
	}
}

// IssuerID is Issuer, or the origin of AuthorizeURL when it is empty.
func (o HTTPOAuthConfig) IssuerID() string {
	if o.Issuer != "" {
		return o.Issuer
	}
	u, err := url.Parse(o.AuthorizeURL)
	if err != nil || u.Host == "" {
		return o.AuthorizeURL
	}
	return u.Scheme + "://" + u.Host
}
