package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"brain/bot/connect"
	"brain/bot/web"
	"brain/engine"
	"brain/internal/oauthclient"
	"brain/store"
	"brain/tools"
	"brain/tools/mcp"
)

// connectLinker is a platform that can send a person, where they asked,
// the link that connects their account, and say in the thread once they
// connected (Slack: a button only they see; Linear and GitHub are
// publicLinkers; console and API sessions show the link on the session's
// page instead).
type connectLinker interface {
	SendConnectLink(ctx context.Context, s engine.Session, user, tool, provider, url string) error
	SayConnected(ctx context.Context, s engine.Session, user, provider, callID, tool string) error
}

// publicLinker is a platform whose threads others read (Linear, GitHub):
// its connect links go to the console's connections page, where only the
// person the link names can start the flow, never straight to the
// provider (a bare OAuth link clicked by someone else would attach their
// account to the person it was made for).
type publicLinker interface {
	connectLinker
	// LinkWhere says, for the model, how the link was sent.
	LinkWhere() string
}

// linkTimeout bounds making and posting a connect link inside a call.
const linkTimeout = 15 * time.Second

// mcpOAuth is the OAuth of an MCP server with auth: oauth. A per-person
// server reads its tool list with any connected person's token and sends
// each call with the caller's own (tools/mcp person.go); a workspace
// server uses the workspace's connection. Nobody authorizes inline: a
// person connects through brain's connect link.
func (a *App) mcpOAuth(id string) *mcp.OAuth {
	svc := a.connect
	if svc == nil {
		return nil
	}
	provider := mcpProvider(id)
	p, ok := svc.Providers[provider]
	if !ok {
		return nil
	}
	if !p.PerPerson {
		return &mcp.OAuth{Client: p.Client, Tokens: svc.Tokens("", provider)}
	}
	actsAs := ""
	for _, m := range a.cfg.MCPServers {
		if m.ID == id {
			actsAs = m.ActsAs
		}
	}
	return &mcp.OAuth{
		Client: p.Client, Tokens: &connect.AnyPerson{Service: svc, Provider: provider},
		PerPerson: true, Provider: provider, ActsAs: actsAs, People: a.toolPeople(),
		TokensFor: func(person string) oauthclient.Tokens { return svc.Tokens(person, provider) },
	}
}

// withConnectLinks wraps a tool (MCP, GitHub acting as a person) so that
// a call refused for want of the person's connection sends them a
// connect link where they asked.
func (a *App) withConnectLinks(d tools.Definition) tools.Definition {
	if run := d.Run; run != nil {
		d.Run = func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
			out, err := run(ctx, call)
			return out, a.connectionNeeded(ctx, call, err)
		}
	}
	if preview := d.Preview; preview != nil {
		d.Preview = func(ctx context.Context, call tools.Call) (tools.Card, error) {
			card, err := preview(ctx, call)
			return card, a.connectionNeeded(ctx, call, err)
		}
	}
	if apply := d.Apply; apply != nil {
		d.Apply = func(ctx context.Context, call tools.Call, dec tools.Decision) (json.RawMessage, error) {
			out, err := apply(ctx, call, dec)
			return out, a.connectionNeeded(ctx, call, err)
		}
	}
	return d
}

// connectionNeeded passes err on, unless it is a ConnectionRequired:
// then it sends the person a connect link and returns the tool error the
// model sees (nothing was sent), saying whether the link went out.
func (a *App) connectionNeeded(ctx context.Context, call tools.Call, err error) error {
	cr, ok := tools.AsConnectionRequired(err)
	if !ok {
		return err
	}
	who := cr.Identity.ExternalID
	if who == "" {
		who = "the person who asked"
	}
	where, lerr := a.sendConnectLink(ctx, call, cr)
	if lerr != nil {
		a.log.Warn("connect link not sent", tools.LogSession, call.SessionID, tools.LogProvider, cr.Provider, tools.LogErr, lerr)
	}
	if where == "" {
		return &tools.Error{Message: fmt.Sprintf("%s: %s has no connection to %s (%s); nothing was sent. "+
			"brain could not send them a connect link here: they (or an admin, POST /v1/connections/connect) can connect it, then retry",
			cr.Tool, who, cr.Provider, cr.Why())}
	}
	return &tools.Error{Message: fmt.Sprintf("%s: %s has no connection to %s (%s); nothing was sent. "+
		"brain sent them a link to connect it (%s); once they connect, the session says so and they can retry this call. "+
		"Tell them briefly; do not call the tool again before then", cr.Tool, who, cr.Provider, cr.Why(), where)}
}

// sendConnectLink makes the person's connect link and sends it on the
// session's platform; where says how ("" when it could not).
func (a *App) sendConnectLink(ctx context.Context, call tools.Call, cr *tools.ConnectionRequired) (where string, err error) {
	if a.connect == nil || a.engine == nil || cr.Identity.IsZero() {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), linkTimeout)
	defer cancel()
	s, err := a.engine.Session(ctx, call.SessionID)
	if err != nil {
		return "", err
	}
	onConsole := s.Origin == engine.OriginConsole || s.Origin == engine.OriginAPI
	linker := a.linkerFor(s.Origin)
	_, public := linker.(publicLinker)
	if (onConsole || public) && (a.cfg.Console.Disabled || a.cfg.PublicURL == "") {
		return "", nil // the link leads to the console's connections page
	}
	if linker == nil && !onConsole {
		return "", nil
	}
	person := cr.Person
	if person == "" {
		if person, err = a.personFor(ctx, cr.Identity); err != nil {
			return "", err
		}
	}
	switch {
	case onConsole:
		// The session's page shows, in the call, a link to the
		// connections page: it starts the flow for whoever signed in, only
		// if they are this person.
		if err := call.ReportProgress(ctx, web.ConnectProgress(cr.Provider, person, cr.Tool)); err != nil {
			return "", err
		}
		return "a link on this session's page in the console", nil
	case public:
		// Others read the thread: the link leads to the connections page,
		// never to the provider, so only this person can use it.
		link := web.ConnectLink(a.cfg.PublicURL, cr.Provider, person, s.ID, call.ToolCallID, cr.Tool)
		if err := linker.SendConnectLink(ctx, s, cr.Identity.ExternalID, cr.Tool, cr.Provider, link); err != nil {
			return "", err
		}
		return linker.(publicLinker).LinkWhere(), nil
	}
	url, err := a.connect.StartFrom(ctx, person, cr.Provider, &connect.Origin{
		SessionID: s.ID, CallID: call.ToolCallID, Tool: cr.Tool, Surface: cr.Identity.Surface, ExternalID: cr.Identity.ExternalID,
	})
	if err != nil {
		return "", err
	}
	if err := linker.SendConnectLink(ctx, s, cr.Identity.ExternalID, cr.Tool, cr.Provider, url); err != nil {
		return "", err
	}
	return "a button only they can see, in this thread", nil
}

// personFor makes a person of an identity linked to nobody: the person
// who finishes the connect link is the one the identity belongs to.
func (a *App) personFor(ctx context.Context, id tools.Identity) (string, error) {
	now := a.connect.Now()
	p := store.Person{ID: NewID("person"), Name: id.ExternalID, CreatedAt: now, UpdatedAt: now}
	if err := a.store.SavePerson(ctx, p); err != nil {
		return "", fmt.Errorf("save person: %w", err)
	}
	if err := a.store.LinkIdentity(ctx, now, p.ID, store.Identity{Surface: id.Surface, ExternalID: id.ExternalID}); err != nil {
		return "", fmt.Errorf("link identity: %w", err)
	}
	return p.ID, nil
}

// linkerFor is the platform of a session's origin, when it sends
// connect links.
func (a *App) linkerFor(origin engine.Origin) connectLinker {
	for _, p := range a.platforms {
		if p.Name() == string(origin) {
			if l, ok := p.(connectLinker); ok {
				return l
			}
		}
	}
	return nil
}

// sayConnected tells the session a call was waiting for, once its person
// connected, and offers the retry.
func (a *App) sayConnected(provider, _ string, from connect.Origin) {
	if a.engine == nil || from.SessionID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), linkTimeout)
	defer cancel()
	s, err := a.engine.Session(ctx, from.SessionID)
	if err != nil {
		a.log.Warn("connected notice not sent", tools.LogSession, from.SessionID, tools.LogErr, err)
		return
	}
	linker := a.linkerFor(s.Origin)
	if linker == nil {
		return
	}
	if err := linker.SayConnected(ctx, s, from.ExternalID, provider, from.CallID, from.Tool); err != nil {
		a.log.Warn("connected notice not sent", tools.LogSession, from.SessionID, tools.LogErr, err)
	}
}
