package sandbox

import (
	"syscall"
	"testing"
)

// TestSeccomp_TableMatchesTheStandardLibrary cross-checks the hand-written
// syscall numbers with those package syscall has for this architecture,
// and every listed call has a number here unless it does not exist.
func TestSeccomp_TableMatchesTheStandardLibrary(t *testing.T) {
	if auditArch == 0 {
		t.Skip("no seccomp filter on this architecture")
	}
	std := map[string]uintptr{
		"mount": syscall.SYS_MOUNT, "umount2": syscall.SYS_UMOUNT2, "pivot_root": syscall.SYS_PIVOT_ROOT,
		"keyctl": syscall.SYS_KEYCTL, "add_key": syscall.SYS_ADD_KEY, "request_key": syscall.SYS_REQUEST_KEY,
		"kexec_load": syscall.SYS_KEXEC_LOAD, "init_module": syscall.SYS_INIT_MODULE, "delete_module": syscall.SYS_DELETE_MODULE,
		"perf_event_open": syscall.SYS_PERF_EVENT_OPEN, "swapon": syscall.SYS_SWAPON, "swapoff": syscall.SYS_SWAPOFF,
		"reboot": syscall.SYS_REBOOT, "settimeofday": syscall.SYS_SETTIMEOFDAY, "clock_settime": syscall.SYS_CLOCK_SETTIME,
		"adjtimex": syscall.SYS_ADJTIMEX, "syslog": syscall.SYS_SYSLOG, "acct": syscall.SYS_ACCT, "quotactl": syscall.SYS_QUOTACTL,
		"vhangup": syscall.SYS_VHANGUP, "lookup_dcookie": syscall.SYS_LOOKUP_DCOOKIE, "clone": syscall.SYS_CLONE, "unshare": syscall.SYS_UNSHARE,
	}
	for name, nr := range std {
		if got, ok := syscallNumbers[name]; !ok || uintptr(got) != nr {
			t.Errorf("%s: table %d (%v), package syscall %d", name, got, ok, nr)
		}
	}
	missing := map[string]bool{"uselib": true, "iopl": true, "ioperm": true} // x86 only
	for _, name := range blockedSyscalls {
		if _, ok := syscallNumbers[name]; !ok && !missing[name] {
			t.Errorf("%s has no number", name)
		}
	}
	if len(seccompProgram())%8 != 0 || len(seccompProgram())/8 > 4096 { // BPF_MAXINSNS
		t.Errorf("program of %d bytes", len(seccompProgram()))
	}
}
