package api_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"brain/internal/contracts"
)

// TestOpenAPI_LintedByRedocly: /v1/openapi.json passes Redocly's CLI
// (pinned in testdata/contracts) with its recommended rules and no error.
// Its canary: the document with a dangling $ref must fail the same lint.
func TestOpenAPI_LintedByRedocly(t *testing.T) {
	modules := contracts.Require(t)
	s := newServer(t, &fakeEngine{}, &fakeSchedules{})
	w := s.do("GET", "/v1/openapi.json", "")
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(good, w.Body.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "broken.json")
	broken := strings.Replace(w.Body.String(), `"#/components/schemas/Session"`, `"#/components/schemas/Sesion"`, 1)
	if err := os.WriteFile(bad, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	lint := func(file string) (string, error) {
		cmd := exec.Command("node", filepath.Join(modules, "@redocly", "cli", "bin", "cli.js"), "lint", "--extends=recommended", "--format=stylish", file)
		cmd.Dir = dir
		// Offline: no telemetry, no update check.
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "CI=true")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// No error, and no warning either.
	if out, err := lint(good); err != nil || !strings.Contains(out, "Your API description is valid") || strings.Contains(out, "warning ") {
		t.Errorf("redocly lint: %v\n%s", err, out)
	}
	if out, err := lint(bad); err == nil || !strings.Contains(out, "no-unresolved-refs") {
		t.Errorf("canary: a dangling $ref passed the lint (%v)\n%s", err, out)
	}
}
