package engine

import "brain/engine/lease"

// The store contract's names for package lease's types: a Store embeds
// Leases and a Commit carries a Fence, so drivers and the conformance
// suite read them here. They are aliases; package lease declares them.
type (
	Leases      = lease.Store
	HeldLease   = lease.Held
	StopRequest = lease.Stop
	Fence       = lease.Fence
)

// Stop requests (lease.Stop).
const (
	StopNone      = lease.StopNone
	StopCancel    = lease.StopCancel
	StopInterrupt = lease.StopInterrupt
)

// ErrFenced is lease.ErrFenced: a commit whose fence no longer holds.
var ErrFenced = lease.ErrFenced
