package contracts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Body is one JSON request body and the TypeScript type of an official
// SDK it must be assignable to.
type Body struct {
	Name string // what sent it, for the report
	Type string // e.g. "ChatCompletionCreateParamsNonStreaming"
	JSON []byte
}

// TypeCheck type-checks bodies with the pinned TypeScript compiler, each as
// an object literal of its type, and returns one error per body the types
// refuse ("" for the ones they accept). Object literals are checked for
// excess properties, so a misspelt or unknown field fails as a wrong type
// does. imports is the TypeScript import line(s) bringing the types in
// (module paths as in testdata/contracts/node_modules).
func TypeCheck(t testing.TB, imports string, bodies []Body) []string {
	t.Helper()
	modules := Require(t)
	node(t)
	errs, err := TypeCheckIn(modules, t.TempDir(), imports, bodies)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

// TypeCheckIn is TypeCheck outside a test (a TestMain checking what a
// package's tests recorded), with the contracts' node_modules and a
// scratch directory.
func TypeCheckIn(modules, dir, imports string, bodies []Body) ([]string, error) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("contracts: node is not installed: %w", err)
	}
	var src strings.Builder
	src.WriteString(imports + "\n")
	first := strings.Count(src.String(), "\n") + 1 // the line of bodies[0]
	for i, b := range bodies {
		var compact bytes.Buffer
		if err := json.Compact(&compact, b.JSON); err != nil {
			return nil, fmt.Errorf("contracts: %s: not JSON: %w", b.Name, err)
		}
		fmt.Fprintf(&src, "export const body%d: %s = %s;\n", i, b.Type, compact.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "bodies.ts"), []byte(src.String()), 0o600); err != nil {
		return nil, fmt.Errorf("contracts: %w", err)
	}
	config := map[string]any{
		"compilerOptions": map[string]any{
			"strict": true, "noEmit": true, "skipLibCheck": true, "target": "es2022",
			"module": "esnext", "moduleResolution": "bundler", "types": []string{},
			"baseUrl": modules, "paths": map[string]any{"*": []string{modules + "/*"}},
			"typeRoots": []string{modules + "/@types"},
		},
		"files": []string{"bodies.ts"},
	}
	data, _ := json.Marshal(config)
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), data, 0o600); err != nil {
		return nil, fmt.Errorf("contracts: %w", err)
	}
	cmd := exec.Command(nodeBin, filepath.Join(modules, "typescript", "bin", "tsc"), "-p", dir, "--pretty", "false")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	errs := make([]string, len(bodies))
	if err == nil {
		return errs, nil
	}
	placed := false
	lines := strings.Split(src.String(), "\n")
	for _, line := range strings.Split(string(out), "\n") {
		m := tscError.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		i := n - first
		if i < 0 || i >= len(bodies) {
			return nil, fmt.Errorf("contracts: tsc: %s\n%s", line, src.String())
		}
		// tsc names the type, not always the field: quote the body where
		// the error points.
		at := lines[n-1][min(col-1, len(lines[n-1])):]
		if len(at) > 60 {
			at = at[:60] + "..."
		}
		errs[i] = strings.TrimSpace(fmt.Sprintf("%s %s (at %s)", errs[i], m[3], at))
		placed = true
	}
	if !placed {
		return nil, fmt.Errorf("contracts: tsc failed without a body's error: %v\n%s", err, out)
	}
	return errs, nil
}

var tscError = regexp.MustCompile(`^bodies\.ts\((\d+),(\d+)\): error (TS\d+: .*)$`)
