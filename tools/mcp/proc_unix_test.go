//go:build unix

package mcp_test

import "syscall"

func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
