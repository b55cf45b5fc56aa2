package sandbox

// auditArch is AUDIT_ARCH_X86_64; hasX32: x32 calls carry bit 30.
const (
	auditArch = 0xc000003e
	hasX32    = true
)

// syscallNumbers are the x86_64 numbers of the calls the filter names.
var syscallNumbers = map[string]uint32{
	"setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "open_tree": 428, "move_mount": 429,
	"fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
	"keyctl": 250, "add_key": 248, "request_key": 249,
	"kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
	"bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
	"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
	"open_by_handle_at": 304, "name_to_handle_at": 303,
	"swapon": 167, "swapoff": 168, "reboot": 169, "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159,
	"syslog": 103, "acct": 163, "quotactl": 179, "quotactl_fd": 443, "vhangup": 153, "lookup_dcookie": 212, "uselib": 134,
	"iopl": 172, "ioperm": 173,
	"clone": 56, "clone3": 435, "unshare": 272,
}
