//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setGroup starts the child in a process group of its own, so that it and
// everything it starts can be signalled together.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func terminateGroup(pid int) { signalGroup(pid, syscall.SIGTERM) }

func killGroup(pid int) { signalGroup(pid, syscall.SIGKILL) }

func signalGroup(pid int, sig syscall.Signal) {
	// Never 0 or 1: kill(0) is brain's own group, kill(-1) every process.
	if pid > 1 {
		_ = syscall.Kill(-pid, sig)
	}
}
