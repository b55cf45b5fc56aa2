package bot

import (
	"context"
	"errors"

	"brain/engine"
	"brain/store"
)

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
