package bot

import (
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPlatforms_OnlyTheListNamesThem: in bot's own (non-test) files, only
// platforms.go imports a platform's packages, so adding a platform edits
// that list and no other shared wiring.
func TestPlatforms_OnlyTheListNamesThem(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	platformPkg := regexp.MustCompile(`^brain/(bot/[a-z]+bridge|channels/|webhooks/)`)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		checked++
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			// channels/console renders the terminal chat, brain's own.
			if platformPkg.MatchString(p) && p != "brain/channels/console" && f != "platforms.go" {
				t.Errorf("%s imports %s: only platforms.go names the platforms", f, p)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d files", checked)
	}
}

// TestPlatforms_ExtendingListsFewFiles: the files docs/extending.md says a
// new chat platform edits exist, and are at most 8 in at most 3 packages.
func TestPlatforms_ExtendingListsFewFiles(t *testing.T) {
	doc, err := os.ReadFile("../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Adding a chat platform")
	if !ok {
		t.Fatal(`docs/extending.md has no "## Adding a chat platform"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, edits, ok := strings.Cut(section, "Existing files it edits:")
	if !ok {
		t.Fatal(`the platform section has no "Existing files it edits:" list`)
	}
	edits, _, _ = strings.Cut(strings.TrimSpace(edits), "\n\n")
	files := regexp.MustCompile("`([a-z/_.]+\\.(?:go|yaml|md))`").FindAllStringSubmatch(edits, -1)
	pkgs := map[string]bool{}
	for _, m := range files {
		if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
			t.Errorf("docs/extending.md lists %s: %v", m[1], err)
		}
		if strings.HasSuffix(m[1], ".go") {
			pkgs[path.Dir(m[1])] = true
		}
	}
	if len(files) == 0 || len(files) > 8 || len(pkgs) > 3 {
		t.Fatalf("a new platform edits %d existing files in %d packages (%v); want at most 8 in 3", len(files), len(pkgs), files)
	}
}
