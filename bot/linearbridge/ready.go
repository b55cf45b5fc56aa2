package linearbridge

import (
	"context"
	"errors"
	"fmt"
	"time"
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

// SetDeliveryObserver sets what is told how long each delivery to the
// platform took and how it ended. Call it before Start.
func (b *Bridge) SetDeliveryObserver(f func(time.Duration, error)) { b.observeDelivery = f }
