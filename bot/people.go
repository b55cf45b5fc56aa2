package bot

import (
	"context"
	"errors"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// peopleResolver resolves the identities behind tool calls to people
// (tools.People), through the store's links.
type peopleResolver struct{ st store.People }

var _ tools.People = peopleResolver{}

// PersonOf implements tools.People.
func (r peopleResolver) PersonOf(ctx context.Context, id tools.Identity) (string, bool, error) {
	if id.IsZero() || id.Surface == tools.SurfaceSchedule {
		return "", false, nil
	}
	p, err := r.st.PersonByIdentity(ctx, store.Identity{Surface: id.Surface, ExternalID: id.ExternalID})
	if errors.Is(err, engine.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return p.ID, true, nil
}

// peopleLinks answers the engine's "who is this identity" from
// store.People, so approvers entries "person:ID", votes and forbid_self
// count one human once across Slack, Linear, GitHub, the console and the
// API.
type peopleLinks struct{ people store.People }

var _ engine.People = peopleLinks{}

// PersonOf implements engine.People.
func (p peopleLinks) PersonOf(ctx context.Context, surface, id string) (string, error) {
	got, err := p.people.PersonByIdentity(ctx, store.Identity{Surface: surface, ExternalID: id})
	if errors.Is(err, engine.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return got.ID, nil
}
