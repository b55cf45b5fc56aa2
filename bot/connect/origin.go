package connect

import (
	"context"
	"errors"

	"brain/internal/oauthclient"
	"brain/store"
)

// Origin is the tool call a connect link was sent for: once the person
// connects, the session says so and offers to run the call again.
type Origin struct {
	SessionID string `json:"session_id"`
	CallID    string `json:"call_id,omitempty"`
	Tool      string `json:"tool,omitempty"`
	// Surface and ExternalID are who the link was sent to (only they
	// may retry).
	Surface    string `json:"surface,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	// Return, when set, is the path on brain the browser is sent to once
	// connected (the console's connections page, or its session's page),
	// instead of the callback's own page. Always a path brain chose.
	Return string `json:"return,omitempty"`
}

// flowDetail is a flow's stored detail: the OAuth flow (no secrets; the
// verifier is sealed apart) and where it was started from. A flow stored
// before Origin existed decodes with none.
type flowDetail struct {
	oauthclient.Flow
	Origin *Origin `json:"origin,omitempty"`
}

// AnyPerson is the token a per-person server's tool list is read with:
// the connection of the first person (by id) connected to the provider.
// It never authorizes (Save fails) and is never used for a call, which
// goes with the caller's own connection (tools/mcp person.go).
type AnyPerson struct {
	Service  *Service
	Provider string
}

var _ oauthclient.Tokens = (*AnyPerson)(nil)

func (a *AnyPerson) holder(ctx context.Context, access string) (*Tokens, bool, error) {
	cs, err := a.Service.Store.ConnectionsOf(ctx, "", true)
	if err != nil {
		return nil, false, err
	}
	for _, c := range cs {
		if c.Provider != a.Provider || c.PersonID == "" || c.Status != store.ConnectionConnected || c.AccessToken == "" {
			continue
		}
		if access == "" || c.AccessToken == access {
			return a.Service.Tokens(c.PersonID, a.Provider), true, nil
		}
	}
	return nil, false, nil
}

// Token implements oauthclient.Tokens.
func (a *AnyPerson) Token(ctx context.Context) (oauthclient.Token, bool, error) {
	t, ok, err := a.holder(ctx, "")
	if err != nil || !ok {
		return oauthclient.Token{}, false, err
	}
	return t.Token(ctx)
}

// Save implements oauthclient.Tokens: nobody authorizes through the tool
// list's reader.
func (a *AnyPerson) Save(context.Context, oauthclient.Token) error {
	return errors.New("a per-person server's connections are made by each person")
}

// Rotate implements oauthclient.Tokens: it refreshes the connection old
// came from, as its person's own Tokens would.
func (a *AnyPerson) Rotate(ctx context.Context, old oauthclient.Token, refresh func(context.Context, oauthclient.Token) (oauthclient.Token, error)) (oauthclient.Token, error) {
	t, ok, err := a.holder(ctx, old.AccessToken)
	if err != nil {
		return oauthclient.Token{}, err
	}
	if !ok {
		return oauthclient.Token{}, oauthclient.ErrNoToken
	}
	return t.Rotate(ctx, old, refresh)
}
