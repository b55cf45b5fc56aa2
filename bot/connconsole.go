package bot

import (
	"context"

	"brain/bot/connect"
	"brain/bot/web"
	"brain/engine"
	"brain/store"
)

// consoleConnections is what the console's connections page asks of
// brain: the store's people and connections, and the connect flows (none
// when no provider is configured).
type consoleConnections struct {
	store.Store
	svc *connect.Service
}

var _ web.Connections = consoleConnections{}

// Providers implements web.Connections.
func (c consoleConnections) Providers() []web.ConnectProvider {
	if c.svc == nil {
		return nil
	}
	out := make([]web.ConnectProvider, 0, len(c.svc.Providers))
	for _, name := range c.svc.ProviderNames() {
		out = append(out, web.ConnectProvider{Name: name, PerPerson: c.svc.Providers[name].PerPerson})
	}
	return out
}

// Connect implements web.Connections.
func (c consoleConnections) Connect(ctx context.Context, personID, provider string, from *web.ConnectOrigin) (string, error) {
	if c.svc == nil {
		return "", engine.Errorf(engine.CodeNotFound, "no provider to connect is configured")
	}
	var o *connect.Origin
	if from != nil {
		o = &connect.Origin{SessionID: from.SessionID, CallID: from.CallID, Tool: from.Tool,
			Surface: from.Surface, ExternalID: from.ExternalID, Return: from.Return}
	}
	return c.svc.StartFrom(ctx, personID, provider, o)
}
