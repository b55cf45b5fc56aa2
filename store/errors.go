package store

import (
	"errors"

	"brain/engine"
)

// Contractual reports whether err is already in the contract's terms — an
// *engine.Error (not found, conflict, ...), engine.ErrInvariant or
// engine.ErrFenced — so a driver's interpretError passes it on as it is
// instead of wrapping it in a driver's message.
func Contractual(err error) bool {
	var ee *engine.Error
	return errors.As(err, &ee) || errors.Is(err, engine.ErrInvariant) || errors.Is(err, engine.ErrFenced)
}
