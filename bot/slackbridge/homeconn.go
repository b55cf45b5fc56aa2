package slackbridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"brain/channels/slack"
	"brain/engine"
	"brain/store"
	"brain/tools"
)

// Accounts is what the Home tab's connections need of the store: the
// person behind a Slack user and their connections. A store without it
// shows no connections.
type Accounts interface {
	PersonByIdentity(ctx context.Context, id store.Identity) (store.Person, error)
	ConnectionsOf(ctx context.Context, personID string, all bool) ([]store.Connection, error)
	ConnectionByID(ctx context.Context, id string) (store.Connection, error)
	RevokeConnection(ctx context.Context, now time.Time, id, problem string) (changed bool, err error)
}

// homeConnections are the connections of the person a Slack user is
// linked to (none for a user linked to nobody).
func (b *Bridge) homeConnections(ctx context.Context, user string) ([]slack.HomeConnection, error) {
	person, ok, err := b.personOf(ctx, user)
	if err != nil || !ok {
		return nil, err
	}
	cs, err := b.accounts.ConnectionsOf(ctx, person, false)
	if err != nil {
		return nil, err
	}
	out := make([]slack.HomeConnection, 0, len(cs))
	for _, c := range cs {
		out = append(out, slack.HomeConnection{ID: c.ID, Provider: c.Provider, Account: c.Account, Scope: c.Scope,
			ExpiresAt: c.ExpiresAt, Status: c.Status, Problem: c.Problem})
	}
	return out, nil
}

func (b *Bridge) personOf(ctx context.Context, user string) (string, bool, error) {
	p, err := b.accounts.PersonByIdentity(ctx, store.Identity{Surface: store.SurfaceSlack, ExternalID: user})
	if errors.Is(err, engine.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return p.ID, true, nil
}

// onHomeRevoke revokes one of the clicker's own connections and
// publishes their Home tab again with what happened.
func (b *Bridge) onHomeRevoke(ctx context.Context, connID, user string) error {
	if b.accounts == nil {
		return nil
	}
	notice := "That connection is not yours."
	person, ok, err := b.personOf(ctx, user)
	if err != nil {
		return err
	}
	c, err := b.accounts.ConnectionByID(ctx, connID)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		notice = "That connection no longer exists."
	case err != nil:
		return err
	case ok && c.PersonID == person:
		if _, err := b.accounts.RevokeConnection(ctx, b.now(), c.ID, "revoked by its person in Slack"); err != nil {
			return err
		}
		notice = fmt.Sprintf("Revoked your connection to %s: brain forgot its tokens. A tool that needs it will send you a link to connect again.", c.Provider)
		b.log.Info("connection revoked by its person", tools.LogConnection, c.ID, tools.LogProvider, c.Provider)
	}
	b.setHomeNotice(user, notice)
	return b.publishHome(ctx, user)
}

// SetAccounts turns on the Home tab's connections.
func (b *Bridge) SetAccounts(a Accounts) { b.accounts = a }
