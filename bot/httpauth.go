package bot

import (
	"context"
	"errors"
	"fmt"

	"brain/bot/config"
	"brain/bot/connect"
	"brain/store"
	"brain/tools"
	"brain/tools/httptool"
)

// declaredTools are the tools.http tools. Those with oauth send the
// bearer token of a connection (httpBearer), and a call refused for want
// of the person's connection sends them a connect link where they asked,
// as for per-person MCP servers (withConnectLinks).
func (a *App) declaredTools() ([]tools.Definition, error) {
	defs, err := httpTools(a.cfg, a.httpBearer)
	if err != nil {
		return nil, err
	}
	for i, h := range a.cfg.Tools.HTTP {
		if h.OAuth != nil {
			defs[i] = a.withConnectLinks(defs[i])
		}
	}
	return defs, nil
}

// httpBearer is the token source of a tools.http tool with oauth
// (provider "http:<name>"): the workspace's connection (per: workspace,
// connected by an admin), or, per: person, the connection of the person
// the call acts as (acts_as; tools.HolderOf, which also gives a
// schedule's call the provider's service account, or refuses it). The
// token is refreshed shortly before it expires, and once more when the
// API answers 401 (stale); it goes on the request and nowhere else.
func (a *App) httpBearer(h config.HTTPToolConfig) httptool.Bearer {
	if h.OAuth == nil {
		return nil
	}
	provider, perPerson := httpProvider(h.Name), h.OAuth.Per == "person"
	return func(ctx context.Context, call tools.Call, stale string) (string, error) {
		svc := a.connect
		if svc == nil {
			return "", tools.Failed("%s: OAuth connections are not set up (public_url); nothing was sent", h.Name)
		}
		var holder tools.Holder
		if perPerson {
			var err error
			if holder, err = tools.HolderOf(ctx, a.toolPeople(), call, h.ActsAs, h.Name, provider); err != nil {
				return "", err
			}
		}
		var (
			tok string
			err error
		)
		if stale == "" {
			tok, err = svc.AccessToken(ctx, holder.Person, provider)
		} else {
			tok, err = svc.Refreshed(ctx, holder.Person, provider, stale)
		}
		var nc *connect.NotConnectedError
		switch {
		case errors.As(err, &nc) && perPerson:
			return "", holder.Missing(h.Name, provider)
		case errors.As(err, &nc):
			outcome := "nothing was sent"
			if stale != "" {
				outcome = "the service refused the request (HTTP 401)"
			}
			return "", tools.Failed("%s: the workspace has no usable connection to %s%s; %s. An admin connects it: "+
				`POST /v1/connections/connect {"provider":%q}`, h.Name, provider, problem(nc), outcome, provider)
		case err != nil:
			return "", fmt.Errorf("%s token: %w", provider, err)
		}
		return tok, nil
	}
}

func problem(nc *connect.NotConnectedError) string {
	if nc.Problem == "" {
		return ""
	}
	return " (" + nc.Problem + ")"
}

// toolPeople is the tools.People of per-person tools: identities through
// the store's links, and the service-account connections an admin
// marked (tools.ServiceAccounts), which schedules use.
func (a *App) toolPeople() tools.People {
	return toolPeople{peopleResolver: peopleResolver{a.store}, conns: a.store}
}

type toolPeople struct {
	peopleResolver
	conns store.Connections
}

var _ tools.ServiceAccounts = toolPeople{}

// ServiceAccount implements tools.ServiceAccounts: the person whose
// connection to provider is marked (the first by person id, should
// several be); a revoked one too, so the caller can say it must be
// connected again.
func (p toolPeople) ServiceAccount(ctx context.Context, provider string) (string, bool, error) {
	cs, err := p.conns.ConnectionsOf(ctx, "", true)
	if err != nil {
		return "", false, err
	}
	for _, c := range cs {
		if c.Provider == provider && c.ServiceAccount && c.PersonID != "" {
			return c.PersonID, true, nil
		}
	}
	return "", false, nil
}
