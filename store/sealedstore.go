package store

import (
	"context"
	"log/slog"
	"time"

	"brain/internal/keyring"
)

// Sealed returns st with its credentials sealed under ring on the way in
// and opened on the way out (SealedLinearTokens, SealedConnections); the
// rest passes through. A Replicated st stays Replicated. ring nil keeps
// credentials plain (no key configured) but still refuses sealed ones.
func Sealed(st Store, ring *keyring.Ring) Store {
	s := sealedStore{Store: st, lin: SealedLinearTokens(st, ring), conns: SealedConnections(st, ring)}
	if rs, ok := st.(Replicated); ok {
		return sealedReplicated{sealedStore: s, rep: rs}
	}
	return s
}

type sealedStore struct {
	Store
	lin   LinearTokens
	conns Connections
}

func (s sealedStore) SaveLinearToken(ctx context.Context, t LinearToken) error {
	return s.lin.SaveLinearToken(ctx, t)
}

func (s sealedStore) LinearToken(ctx context.Context, org string) (LinearToken, error) {
	return s.lin.LinearToken(ctx, org)
}

func (s sealedStore) LinearTokens(ctx context.Context) ([]LinearToken, error) {
	return s.lin.LinearTokens(ctx)
}

func (s sealedStore) RotateLinearToken(ctx context.Context, org, oldRefresh string, next LinearToken) (bool, error) {
	return s.lin.RotateLinearToken(ctx, org, oldRefresh, next)
}

func (s sealedStore) RevokeLinearToken(ctx context.Context, now time.Time, org, refresh, problem string) error {
	return s.lin.RevokeLinearToken(ctx, now, org, refresh, problem)
}

func (s sealedStore) SaveConnection(ctx context.Context, c Connection) error {
	return s.conns.SaveConnection(ctx, c)
}

func (s sealedStore) Connection(ctx context.Context, personID, provider string) (Connection, error) {
	return s.conns.Connection(ctx, personID, provider)
}

func (s sealedStore) ConnectionByID(ctx context.Context, id string) (Connection, error) {
	return s.conns.ConnectionByID(ctx, id)
}

func (s sealedStore) ConnectionsOf(ctx context.Context, personID string, all bool) ([]Connection, error) {
	return s.conns.ConnectionsOf(ctx, personID, all)
}

func (s sealedStore) ExpiringConnections(ctx context.Context, before time.Time, limit int) ([]Connection, error) {
	return s.conns.ExpiringConnections(ctx, before, limit)
}

func (s sealedStore) RotateConnection(ctx context.Context, id, oldRefresh string, next Connection) (bool, error) {
	return s.conns.RotateConnection(ctx, id, oldRefresh, next)
}

func (s sealedStore) SaveOAuthClient(ctx context.Context, c OAuthClient) error {
	return s.conns.SaveOAuthClient(ctx, c)
}

func (s sealedStore) OAuthClient(ctx context.Context, issuer string) (OAuthClient, error) {
	return s.conns.OAuthClient(ctx, issuer)
}

func (s sealedStore) SaveConnectFlow(ctx context.Context, now time.Time, f ConnectFlow) error {
	return s.conns.SaveConnectFlow(ctx, now, f)
}

func (s sealedStore) ConsumeConnectFlow(ctx context.Context, now time.Time, state string) (ConnectFlow, bool, error) {
	return s.conns.ConsumeConnectFlow(ctx, now, state)
}

// sealedReplicated keeps the Replicated capability of the store it seals.
type sealedReplicated struct {
	sealedStore
	rep Replicated
}

func (s sealedReplicated) StopTurn(ctx context.Context, sessionID string, interrupt bool) error {
	return s.rep.StopTurn(ctx, sessionID, interrupt)
}

func (s sealedReplicated) Changes(ctx context.Context, poll time.Duration, log *slog.Logger, feed Feed) {
	s.rep.Changes(ctx, poll, log, feed)
}

var _ Replicated = sealedReplicated{}
