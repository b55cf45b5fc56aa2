package lease

import (
	"errors"
	"fmt"
)

// Fence makes a commit conditional on a lease: the store writes it only
// if, inside the commit's own transaction, the lease on Key exists and is
// held by Owner. A replica that lost a lease (its heartbeat stalled past
// the lease time: a long pause, a partition) may still have a commit in
// flight after another replica claimed the lease and took the work over;
// the fence refuses that commit, so the work is never written by two
// replicas. Expiry is not checked: a lease nobody has claimed since is
// still its owner's to write under, since a takeover always claims first.
type Fence struct {
	Key   string
	Owner string
}

// ErrFenced is what a store returns (wrapped with what was refused) for a
// commit whose Fence no longer holds: nothing was written.
var ErrFenced = errors.New("fenced: the lease is no longer held by this owner")

// Refused is the error a store returns for a commit f refused; holder is
// the lease's owner ("" when nobody holds it).
func (f Fence) Refused(op, holder string) error {
	if holder == "" {
		return fmt.Errorf("%s: lease %s is not held by %s: %w", op, f.Key, f.Owner, ErrFenced)
	}
	return fmt.Errorf("%s: lease %s is held by %s, not %s: %w", op, f.Key, holder, f.Owner, ErrFenced)
}
