package linearbridge

import (
	"errors"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/engine"
)

// Platform is Linear as bot's platform list sees it; once connected, the
// Bridge.
type Platform struct {
	*Bridge
	cfg *config.Config
}

// NewPlatform is Linear from the linear block, which must be set.
func NewPlatform(cfg *config.Config) *Platform { return &Platform{cfg: cfg} }

// Name is Linear's origin, inbox source and readiness check.
func (p *Platform) Name() string { return InboxSource }

// Hooks are none: Linear shares no files and has no groups of approvers.
func (p *Platform) Hooks() bridge.Hooks { return bridge.Hooks{} }

// Connect builds the bridge; the store must keep Linear's tokens.
func (p *Platform) Connect(d bridge.Deps) error {
	st, ok := d.Store.(Store)
	if !ok {
		return errors.New("linear: the store keeps no Linear tokens")
	}
	b := New(p.cfg.Linear, p.cfg.PublicURL, d.Engine, st, d.Clock, d.Log)
	b.SetDeliveryObserver(d.ObserveDelivery)
	p.Bridge = b
	return nil
}

// Routes are the webhook and, with linear.client_id, the OAuth install.
func (p *Platform) Routes() []bridge.Route {
	routes := []bridge.Route{{Pattern: "POST /linear/webhook", Handler: p.HTTP()}}
	if h := p.InstallHandler(); h != nil {
		routes = append(routes,
			bridge.Route{Pattern: "GET " + InstallPath, Handler: h},
			bridge.Route{Pattern: "GET " + CallbackPath, Handler: p.CallbackHandler()})
	}
	return routes
}

// SessionLink is none: Linear shows agent sessions in their issue, which
// the thread key does not name.
func (p *Platform) SessionLink(engine.Session) string { return "" }
