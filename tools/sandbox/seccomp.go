package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
)

// blockedSyscalls are the system calls a sandboxed command gets EPERM for:
// none is needed to build, test or run ordinary programs, and each is
// kernel attack surface or reaches past the sandbox. bwrap loads the filter
// (see seccompProgram) just before it starts the command, so it binds the
// command and everything it starts, in every mode (as root too, where
// --disable-userns cannot be used).
var blockedSyscalls = []string{
	// Nested namespaces and mounts: a user namespace would give the
	// command every capability over the namespaces it then creates
	// (clone and unshare with CLONE_NEWUSER are refused by flag below).
	"setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	// The kernel keyring is not namespaced: keys would outlive the command
	// and be shared with the host user.
	"keyctl", "add_key", "request_key",
	// Loading kernel code or a new kernel; eBPF programs; performance
	// counters (side channels); userfaultfd (exploits use it to stall the
	// kernel); io_uring (a large, often exploited interface no command
	// needs).
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	// Files by handle bypass the mount namespace's view.
	"open_by_handle_at", "name_to_handle_at",
	// Host-wide state: swap, reboot, clock, kernel log, accounting,
	// quotas, terminals, raw I/O ports.
	"swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"syslog", "acct", "quotactl", "quotactl_fd", "vhangup", "lookup_dcookie", "uselib", "iopl", "ioperm",
}

// Allowed on purpose: ptrace and process_vm_readv/writev (debuggers and
// strace work; the pid namespace shows only the sandbox's own processes),
// personality, chroot (needs a capability the command does not have).

// Classic BPF as seccomp reads it.
const (
	bpfLdAbs     = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeq       = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJge       = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJset      = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRet       = 0x06 // BPF_RET | BPF_K
	retAllow     = 0x7fff0000
	retErrno     = 0x00050000
	offNr        = 0  // seccomp_data.nr
	offArch      = 4  // seccomp_data.arch
	offArg0Low   = 16 // seccomp_data.args[0], low half (little-endian)
	x32Bit       = 0x40000000
	cloneNewUser = syscall.CLONE_NEWUSER
)

type sockFilter struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// seccompProgram is the filter bwrap loads (--seccomp), as the kernel's
// struct sock_filter array in native byte order; nil where brain knows no
// syscall table (architectures other than amd64 and arm64: no filter).
//
// A foreign architecture's calls (i386 through int 0x80, x32) get EPERM:
// their numbers differ, so the list could be dodged. clone3 gets ENOSYS,
// because its flags sit in memory a filter cannot read: the C library then
// falls back to clone, whose flags are checked.
func seccompProgram() []byte {
	if auditArch == 0 {
		return nil
	}
	eperm := retErrno | uint32(syscall.EPERM)
	p := []sockFilter{
		{bpfLdAbs, 0, 0, offArch},
		{bpfJeq, 1, 0, auditArch},
		{bpfRet, 0, 0, eperm},
		{bpfLdAbs, 0, 0, offNr},
	}
	if hasX32 {
		p = append(p, sockFilter{bpfJge, 0, 1, x32Bit}, sockFilter{bpfRet, 0, 0, eperm})
	}
	for _, name := range blockedSyscalls {
		nr, ok := syscallNumbers[name]
		if !ok {
			continue // not on this architecture
		}
		p = append(p, sockFilter{bpfJeq, 0, 1, nr}, sockFilter{bpfRet, 0, 0, eperm})
	}
	p = append(p,
		sockFilter{bpfJeq, 0, 1, syscallNumbers["clone3"]},
		sockFilter{bpfRet, 0, 0, retErrno | uint32(syscall.ENOSYS)},
		sockFilter{bpfJeq, 1, 0, syscallNumbers["clone"]},
		sockFilter{bpfJeq, 0, 3, syscallNumbers["unshare"]},
		sockFilter{bpfLdAbs, 0, 0, offArg0Low},
		sockFilter{bpfJset, 0, 1, cloneNewUser},
		sockFilter{bpfRet, 0, 0, eperm},
		sockFilter{bpfRet, 0, 0, retAllow},
	)
	out := make([]byte, 0, 8*len(p))
	for _, f := range p {
		out = binary.NativeEndian.AppendUint16(out, f.code)
		out = append(out, f.jt, f.jf)
		out = binary.NativeEndian.AppendUint32(out, f.k)
	}
	return out
}

// seccompFile is a pipe whose read end holds program, for bwrap's
// --seccomp fd; the caller closes it once bwrap has started.
func seccompFile(program []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("seccomp pipe: %w", err)
	}
	// A few hundred bytes: far below a pipe's buffer, so this never blocks.
	_, err = w.Write(program)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("seccomp pipe: %w", err)
	}
	return r, nil
}
