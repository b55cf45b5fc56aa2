package engine

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

type sqlStateErr string

func (e sqlStateErr) Error() string    { return "pg: " + string(e) }
func (e sqlStateErr) SQLState() string { return string(e) }

// TestStoreUnreachable: an outage is retried; answers (fencing,
// conflicts, not found, constraint violations) never are.
func TestStoreUnreachable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("commit: %w", syscall.ECONNREFUSED), true},
		{fmt.Errorf("get: %w", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ENOENT}), true},
		{fmt.Errorf("commit: %w", sqlStateErr("57P01")), true}, // admin shutdown
		{fmt.Errorf("commit: %w", sqlStateErr("08006")), true}, // connection failure
		{errors.New("commit session s: conn closed"), true},
		{errors.New("database is locked (5) (SQLITE_BUSY)"), true},
		{fmt.Errorf("commit: %w", ErrFenced), false},
		{fmt.Errorf("commit: %w", Errorf(CodeConflict, "a turn started")), false},
		{fmt.Errorf("get: %w", ErrNotFound), false},
		{fmt.Errorf("commit: %w", sqlStateErr("23505")), false}, // unique violation
		{fmt.Errorf("commit: %w", sqlStateErr("40001")), false}, // serialization failure: the store's own retry
		{errors.New("invalid event"), false},
		{nil, false},
	} {
		if got := storeUnreachable(c.err); got != c.want {
			t.Errorf("storeUnreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
