package store

import (
	"errors"

	"brain/engine"
)

// Passed is what a driver's interpretError returns as it is, nil when err
// is the driver's to translate: the error of a commit's Update or Emit,
// unwrapped from the UpdateError that carried it out of the transaction, or
// an error already in the contract's terms — an *engine.Error (not found,
// conflict, ...), engine.ErrInvariant or engine.ErrFenced.
func Passed(err error) error {
	var ue UpdateError
	if errors.As(err, &ue) {
		return ue.Err
	}
	var ee *engine.Error
	if errors.As(err, &ee) || errors.Is(err, engine.ErrInvariant) || errors.Is(err, engine.ErrFenced) {
		return err
	}
	return nil
}
