package bot

import (
	"net/http"
	"time"

	"brain/bot/config"
	"brain/bot/connect"
	"brain/internal/oauthclient"
)

// Providers of OAuth connections that tools use (beside MCP servers').
const githubProvider = "github"

// httpProvider names a tools.http tool's connections.
func httpProvider(tool string) string { return "http:" + tool }

// hasOAuthTools reports whether a tool is configured with OAuth
// connections: GitHub user tokens or a tools.http tool's oauth.
func hasOAuthTools(cfg *config.Config) bool {
	if g := cfg.Tools.GitHub; g != nil && g.UserTokens != nil {
		return true
	}
	for _, h := range cfg.Tools.HTTP {
		if h.OAuth != nil {
			return true
		}
	}
	return false
}

// addToolProviders adds the hand-configured providers: "github" (GitHub
// App user access tokens, each person their own) and "http:<tool>".
func addToolProviders(svc *connect.Service, cfg *config.Config, redirect string, clock func() time.Time) {
	client := func(id, secret string) *oauthclient.Client {
		return &oauthclient.Client{
			HTTP:        &http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirects},
			RedirectURL: redirect, ClientName: "brain", ClientID: id, ClientSecret: secret, Now: clock,
		}
	}
	if g := cfg.Tools.GitHub; g != nil && g.UserTokens != nil {
		u := g.UserTokens
		svc.Providers[githubProvider] = connect.Provider{
			Name: githubProvider, Client: client(u.ClientID, u.ClientSecret), PerPerson: true,
			// GitHub App user tokens carry the app's permissions, not
			// scopes: none are asked for.
			Endpoints: &connect.Endpoints{Issuer: u.Authorize(), AuthorizeURL: u.Authorize(), TokenURL: u.Token()},
		}
	}
	for _, h := range cfg.Tools.HTTP {
		o := h.OAuth
		if o == nil {
			continue
		}
		name := httpProvider(h.Name)
		svc.Providers[name] = connect.Provider{
			Name: name, Client: client(o.ClientID, o.ClientSecret), PerPerson: o.Per == "person",
			Endpoints: &connect.Endpoints{Issuer: o.IssuerID(), AuthorizeURL: o.AuthorizeURL, TokenURL: o.TokenURL, Scopes: o.Scopes},
		}
	}
}
