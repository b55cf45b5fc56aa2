//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

// Without process groups only the direct child can be killed.

func setGroup(*exec.Cmd) {}

func terminateGroup(int) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		_ = p.Kill()
	}
}
