package sandbox

// auditArch is AUDIT_ARCH_AARCH64.
const (
	auditArch = 0xc00000b7
	hasX32    = false
)

// syscallNumbers are the arm64 (asm-generic) numbers of the calls the
// filter names; uselib, iopl and ioperm do not exist there.
var syscallNumbers = map[string]uint32{
	"setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "open_tree": 428, "move_mount": 429,
	"fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
	"keyctl": 219, "add_key": 217, "request_key": 218,
	"kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
	"bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
	"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
	"open_by_handle_at": 265, "name_to_handle_at": 264,
	"swapon": 224, "swapoff": 225, "reboot": 142, "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171,
	"syslog": 116, "acct": 89, "quotactl": 60, "quotactl_fd": 443, "vhangup": 58, "lookup_dcookie": 18,
	"clone": 220, "clone3": 435, "unshare": 97,
}
