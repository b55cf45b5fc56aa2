//go:build !amd64 && !arm64

package sandbox

// No syscall table for this architecture: no seccomp filter.
const (
	auditArch = 0
	hasX32    = false
)

var syscallNumbers = map[string]uint32{}
