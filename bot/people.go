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
