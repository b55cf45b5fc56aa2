// Package contracts checks what brain sends to the platforms it talks to,
// and what its test fakes answer, against the contracts those platforms
// publish: GitHub's OpenAPI description of its REST API, the TypeScript
// request types of Slack's and OpenAI's official Node SDKs, Slack's app
// manifest schema and Redocly's OpenAPI linter. Tests only: the contracts
// are pinned npm packages that `make test-deps` installs into
// testdata/contracts at the repository root (docs/testing.md lists them).
package contracts

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// installCommand installs the pinned contracts.
const installCommand = "make test-deps"

// Dir returns testdata/contracts of the repository holding the working
// directory (found by walking up to go.mod).
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("contracts: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "contracts"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("contracts: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Require returns the installed node_modules of the contracts. A missing
// install fails the test (the contracts are part of the suite); set
// BRAIN_SKIP_NODE=1 on a machine without node to skip instead.
func Require(t testing.TB) string {
	t.Helper()
	if os.Getenv("BRAIN_SKIP_NODE") == "1" {
		t.Skip("BRAIN_SKIP_NODE=1: the platforms' published contracts are not checked")
	}
	modules, err := Installed()
	if err != nil {
		t.Fatal(err)
	}
	return modules
}

// Installed returns the contracts' node_modules, or why it cannot.
func Installed() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".installed-lock.json")); err != nil {
		return "", fmt.Errorf("the published contracts are not installed (%v): run `%s`, or set BRAIN_SKIP_NODE=1 to skip", err, installCommand)
	}
	return modules, nil
}

// node returns the node binary, failing the test without one.
func node(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: run `%s`, or set BRAIN_SKIP_NODE=1 to skip", installCommand)
	}
	return path
}
