package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Defaults of the resource limits (see Config).
const (
	defaultProcesses     = 1024
	defaultMemoryBytes   = 4 << 30
	defaultCPUSeconds    = 600
	defaultFileBytes     = 1 << 30
	defaultWorkspaceSize = 2 << 30
)

// budgetKey names the workspace budget in its error, for the operator.
const budgetKey = "tools.sandbox_exec.max_workspace_bytes"

// limitDefaults fills in the limits left zero; a negative one is off.
func limitDefaults(cfg *Config) {
	def := func(v *int64, d int64) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = -1
		}
	}
	procs, cpu := int64(cfg.MaxProcesses), int64(cfg.MaxCPUSeconds)
	def(&procs, defaultProcesses)
	def(&cpu, defaultCPUSeconds)
	cfg.MaxProcesses, cfg.MaxCPUSeconds = int(procs), int(cpu)
	def(&cfg.MaxMemoryBytes, defaultMemoryBytes)
	def(&cfg.MaxFileBytes, defaultFileBytes)
	def(&cfg.MaxWorkspaceBytes, defaultWorkspaceSize)
}

// rlimits are prlimit's options for the limits that are on.
//
// The limits are set by prlimit (util-linux) run inside the sandbox, just
// before the command: Go cannot set a child's rlimits between fork and
// exec, and setting them on bwrap itself would bind bwrap's own setup and,
// for RLIMIT_NPROC, be checked against the user's processes on the whole
// host. Inside, after bwrap made the sandbox's user namespace, the kernel
// (5.14+) counts RLIMIT_NPROC per user namespace: the limit is on this
// command's processes alone, not on every process of that host user.
//
// Memory is RLIMIT_DATA, not RLIMIT_AS: RLIMIT_DATA counts the private
// writable memory a process maps (its heap), so runtimes that reserve a
// large address space up front (the JVM, V8, Go) still start.
//
// The CPU limit's hard value is one second over its soft one: at the soft
// limit the process gets SIGXCPU ("CPU time limit exceeded"), at the hard
// one, if it went on, SIGKILL.
func (c Config) rlimits() []string {
	var o []string
	if c.MaxProcesses > 0 {
		o = append(o, "--nproc="+strconv.Itoa(c.MaxProcesses))
	}
	if c.MaxMemoryBytes > 0 {
		o = append(o, "--data="+strconv.FormatInt(c.MaxMemoryBytes, 10))
	}
	if c.MaxCPUSeconds > 0 {
		o = append(o, fmt.Sprintf("--cpu=%d:%d", c.MaxCPUSeconds, c.MaxCPUSeconds+1))
	}
	if c.MaxFileBytes > 0 {
		o = append(o, "--fsize="+strconv.FormatInt(c.MaxFileBytes, 10))
	}
	return o
}

// limitsText describes the limits to the model, for the tool description.
func (c Config) limitsText() string {
	t := ""
	if c.MaxProcesses > 0 {
		t += fmt.Sprintf(" A command may run at most %d processes and threads at once.", c.MaxProcesses)
	}
	var per []string
	if c.MaxMemoryBytes > 0 {
		per = append(per, formatBytes(c.MaxMemoryBytes)+" of memory")
	}
	if c.MaxCPUSeconds > 0 {
		per = append(per, fmt.Sprintf("%d CPU seconds", c.MaxCPUSeconds))
	}
	if len(per) > 0 {
		t += " Each process may use at most " + strings.Join(per, " and ") + "."
	}
	if c.MaxFileBytes > 0 {
		t += " No file may grow past " + formatBytes(c.MaxFileBytes) + "."
	}
	if c.MaxWorkspaceBytes > 0 {
		t += " /workspace may hold at most " + formatBytes(c.MaxWorkspaceBytes) + "."
	}
	return t
}

// overBudget measures the workspace after a command and returns why it is
// over its budget, or "".
func (s *Sandboxes) overBudget(ws string) (string, error) {
	limit := s.cfg.MaxWorkspaceBytes
	if limit <= 0 {
		return "", nil
	}
	size, err := diskUsage(ws)
	if err != nil {
		return "", err
	}
	if size <= limit {
		return "", nil
	}
	return fmt.Sprintf("/workspace is %s, over its %s budget (%s); delete files in /workspace to get under it: "+
		"until then every command ends with this error", formatBytes(size), formatBytes(limit), budgetKey), nil
}

// diskUsage is the disk space a directory tree takes, as du counts it:
// allocated blocks (a sparse file counts what it stores), each inode once.
// Symlinks are not followed.
func diskUsage(dir string) (int64, error) {
	var total int64
	seen := map[[2]uint64]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				rel, _ := filepath.Rel(dir, path)
				return fmt.Errorf("/workspace/%s cannot be read; make it readable (chmod -R u+rwX) so its size can be counted", filepath.ToSlash(rel))
			}
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			total += fi.Size()
			return nil
		}
		if st.Nlink > 1 {
			id := [2]uint64{st.Dev, st.Ino}
			if seen[id] {
				return nil
			}
			seen[id] = true
		}
		total += st.Blocks * 512
		return nil
	})
	return total, err
}

// formatBytes writes a size the way people read it: 512 B, 64 KiB, 1.2 GiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	name := string("KMGTPE"[exp]) + "iB"
	if n%div == 0 {
		return fmt.Sprintf("%d %s", n/div, name)
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(div), name)
}
