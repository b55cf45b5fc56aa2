//go:build !unix

package mcp_test

func processExists(int) bool { return false }
