package linearbridge

import (
	"context"
	"errors"
	"fmt"
)

// Ready reports whether Linear accepts the token of every connected
// workspace (and the static access token): each answers the viewer query.
func (b *Bridge) Ready(ctx context.Context) error {
	clients, err := b.allClients(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range clients {
		if _, err := c.Viewer(ctx); err != nil {
			errs = append(errs, fmt.Errorf("linear token refused: %w", err))
		}
	}
	return errors.Join(errs...)
}
