package bot

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakefile_FuzzTargetsExist: every `make fuzz` line names a fuzz test
// that its package has, since `go test -fuzz` with no match passes while
// fuzzing nothing (a target left behind when its code moved).
func TestMakefile_FuzzTargetsExist(t *testing.T) {
	raw, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`-fuzz '\^(Fuzz\w+)\$\$' -fuzztime \S+ (\./\S+)`)
	found := 0
	for _, m := range line.FindAllStringSubmatch(string(raw), -1) {
		found++
		name, dir := m[1], filepath.Join("..", strings.TrimSuffix(m[2], "/"))
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		has := false
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(body), "func "+name+"(") {
				has = true
			}
		}
		if !has {
			t.Errorf("make fuzz runs %s in %s, which has no such fuzz test", name, m[2])
		}
	}
	if found < 10 {
		t.Fatalf("found %d fuzz lines in the Makefile: is the pattern broken?", found)
	}
}
