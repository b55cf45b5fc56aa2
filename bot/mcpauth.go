package bot

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"brain/bot/api"
	"brain/bot/config"
	"brain/bot/connect"
	"brain/internal/oauthclient"
	"brain/store"
	"brain/tools"
)

// mcpProvider names an MCP server's connections.
func mcpProvider(id string) string { return "mcp:" + id }

// buildConnect builds the connect flows of the servers with auth: oauth;
// nil when there is none.
func buildConnect(cfg *config.Config, st store.Connections, clock func() time.Time, newID func(string) string, log *slog.Logger) *connect.Service {
	var oauthServers []config.MCPServerConfig
	for _, m := range cfg.MCPServers {
		if m.Auth == "oauth" {
			oauthServers = append(oauthServers, m)
		}
	}
	if len(oauthServers) == 0 && !hasOAuthTools(cfg) {
		return nil
	}
	base := strings.TrimSuffix(cfg.PublicURL, "/")
	regs := &connect.Registrations{Store: st, Now: clock}
	// brain's client ID metadata document is its client id only where
	// authorization servers can fetch it: an https public URL.
	metadataURL := ""
	if strings.HasPrefix(base, "https://") {
		metadataURL = base + connect.MetadataPath
	}
	svc := &connect.Service{Store: st, Providers: map[string]connect.Provider{}, Now: clock,
		NewID: func() string { return newID("conn") }, Log: log.With(tools.LogComponent, "connect")}
	for _, m := range oauthServers {
		c := &oauthclient.Client{
			HTTP:          oauthHTTP(m.URL),
			RedirectURL:   base + connect.CallbackPath,
			ClientName:    "brain",
			MetadataURL:   metadataURL,
			Registrations: regs,
			Now:           clock,
		}
		if m.OAuth != nil {
			c.ClientID, c.ClientSecret = m.OAuth.ClientID, m.OAuth.ClientSecret
		}
		svc.Providers[mcpProvider(m.ID)] = connect.Provider{Name: mcpProvider(m.ID), ServerURL: m.URL, Client: c,
			PerPerson: m.Per == "person"}
	}
	addToolProviders(svc, cfg, base+connect.CallbackPath, clock)
	if metadataURL != "" {
		svc.Metadata = (&oauthclient.Client{MetadataURL: metadataURL, RedirectURL: base + connect.CallbackPath, ClientName: "brain"}).MetadataDocument()
	}
	return svc
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// mountConnect serves the connect callback and the client ID metadata
// document, reconnects an MCP server once it is connected, and runs the
// refresh worker.
func (a *App) mountConnect(mcps *mcpCatalog) {
	if a.connect == nil {
		return
	}
	a.connect.OnConnected = func(provider, personID string, from *connect.Origin) {
		if id, ok := strings.CutPrefix(provider, "mcp:"); ok && mcps != nil {
			mcps.reconnect(id)
		}
		if from != nil {
			a.sayConnected(provider, personID, *from)
		}
	}
	// Tokens about to expire are refreshed ahead of the calls that need
	// them, once across replicas.
	a.services = append(a.services, &connect.Refresher{Service: a.connect, Log: a.connect.Log})
	a.connect.Verify = a.verifyConnection
	a.api.Mount("GET "+connect.CallbackPath, http.HandlerFunc(a.connect.Callback))
	a.api.Mount("GET "+connect.MetadataPath, http.HandlerFunc(a.connect.ServeMetadata))
}

// connectorOf is the API's connector: nil (not a typed nil) without
// connect flows.
func connectorOf(svc *connect.Service) api.Connector {
	if svc == nil {
		return nil
	}
	return svc
}
