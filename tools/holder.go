package tools

import (
	"context"
)

// ServiceAccounts finds the connection an admin marked as a service
// account for a provider: the one person's connection a schedule may use.
// A tools.People may implement it; one that does not has none.
type ServiceAccounts interface {
	// ServiceAccount returns the person whose connection to provider is
	// marked as the service account; ok is false when none is.
	ServiceAccount(ctx context.Context, provider string) (personID string, ok bool, err error)
}

// Holder is whose connection a call to a per-person tool uses.
type Holder struct {
	Person   string   // brain's person id
	Identity Identity // who the call acts as
	// Service: a schedule's call, through the provider's service-account
	// connection (Person is that connection's person).
	Service bool
}

// HolderOf resolves whose connection to provider a per-person call uses
// under mode (ActsAsRequester or ActsAsApprover; "" is requester). Every
// per-person tool family (MCP servers, tools.http with oauth, GitHub user
// tokens) asks this, so the rules are one:
//
//   - a person asked: their own connection; a person linked to nobody is a
//     *ConnectionRequired (the bot layer sends them a connect link);
//   - a schedule asked: nobody can connect or be asked, and a person's
//     connection is never used for a schedule, except the one an admin
//     marked as the provider's service account; without one the call is
//     refused, saying how to mark one;
//   - nobody asked: refused.
//
// Errors come before anything is sent. tool names the tool in messages.
func HolderOf(ctx context.Context, people People, call Call, mode, tool, provider string) (Holder, error) {
	if mode == "" || mode == ActsAsApp {
		mode = ActsAsRequester
	}
	who := call.Actor(mode)
	if who.Surface == SurfaceSchedule {
		if sa, ok := people.(ServiceAccounts); ok {
			person, found, err := sa.ServiceAccount(ctx, provider)
			if err != nil {
				return Holder{}, Failed("%s: look up the service account of %s: %v; nothing was sent", tool, provider, err)
			}
			if found {
				return Holder{Person: person, Identity: who, Service: true}, nil
			}
		}
		return Holder{}, Failed("%s: %s uses each person's own connection, and a schedule's session has nobody to act as "+
			"(schedules never use a person's connection); nothing was sent. An admin can mark one connection to %s as "+
			"the service account schedules use: POST /v1/connections/{id}/service-account {\"enabled\":true}",
			tool, provider, provider)
	}
	if who.IsZero() {
		return Holder{}, Failed("%s: %s uses each person's own connection, and this call has nobody to act as; nothing was sent",
			tool, provider)
	}
	person, ok, err := people.PersonOf(ctx, who)
	if err != nil {
		return Holder{}, Failed("%s: look up who asked: %v; nothing was sent", tool, err)
	}
	if !ok {
		return Holder{}, &ConnectionRequired{Tool: tool, Provider: provider, Identity: who}
	}
	return Holder{Person: person, Identity: who}, nil
}

// Missing is the error for a holder without a usable connection (never
// connected, revoked, refused): a *ConnectionRequired, so the person gets
// a connect link where they asked; for a service account, a plain tool
// error, since a schedule has nobody to send a link to.
func (h Holder) Missing(tool, provider string) error {
	if h.Service {
		return Failed("%s: the service-account connection to %s (person %s) is missing or revoked; nothing was sent. "+
			"They connect it again, then an admin marks the new connection as the service account", tool, provider, h.Person)
	}
	return &ConnectionRequired{Tool: tool, Provider: provider, Person: h.Person, Identity: h.Identity}
}
