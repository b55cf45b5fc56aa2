// Package lease is how replicas sharing a store never do one piece of work
// at once: leases (time-limited claims kept in the store) and their
// heartbeat, stop requests left on a lease for its holder, and the fence
// that makes a commit conditional on a lease. It imports nothing of the
// project; the engine holds its leases through a Holder, and store drivers
// implement Store.
package lease
