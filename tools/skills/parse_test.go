package skills_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"brain/tools/skills"
)

// writeSkill writes content as folder/SKILL.md under a new temporary
// folder and returns the skill's folder.
func writeSkill(t *testing.T, folder, content string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, skills.File), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestParse_Valid(t *testing.T) {
	for _, tc := range []struct {
		name, folder, content string
		check                 func(t *testing.T, s skills.Skill)
	}{
		{
			name: "minimal", folder: "pdf",
			content: "---\nname: pdf\ndescription: Fill and read PDF forms.\n---\n# PDF\n\nUse pdftk.\n",
			check: func(t *testing.T, s skills.Skill) {
				if s.Name != "pdf" || s.Description != "Fill and read PDF forms." || s.Body != "# PDF\n\nUse pdftk." {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "every key, CRLF, scalars read as strings", folder: "data-2",
			content: "---\r\nname: data-2\r\ndescription: >\r\n  Folded\r\n  text.\r\nlicense: Apache-2.0\r\ncompatibility: Needs python3\r\n" +
				"allowed-tools: Bash(git:*) Read\r\nmetadata:\r\n  version: 1.0\r\n  author: me\r\n---\r\nBody\r\n",
			check: func(t *testing.T, s skills.Skill) {
				if s.Description != "Folded text." || s.License != "Apache-2.0" || s.Compatibility != "Needs python3" ||
					s.AllowedTools != "Bash(git:*) Read" || s.Metadata["version"] != "1.0" || s.Metadata["author"] != "me" || s.Body != "Body" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "64-character name and 1024-character description", folder: strings.Repeat("a", 64),
			content: "---\nname: " + strings.Repeat("a", 64) + "\ndescription: " + strings.Repeat("d", 1024) + "\n---\n",
		},
		{
			name: "unicode letters", folder: "données",
			content: "---\nname: données\ndescription: x\n---\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSkill(t, tc.folder, tc.content)
			s, probs := skills.Parse(dir)
			if len(probs) > 0 {
				t.Fatalf("problems: %v", probs)
			}
			if s.Dir != dir || s.File != filepath.Join(dir, skills.File) {
				t.Errorf("Dir %q File %q", s.Dir, s.File)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func TestParse_Invalid(t *testing.T) {
	const desc = "description: x\n"
	for _, tc := range []struct {
		name, folder, content string
		line                  int
		want                  string
	}{
		{"no front matter", "a", "# just markdown\n", 1, "must start with YAML front matter"},
		{"front matter not closed", "a", "---\nname: a\n" + desc, 1, "not closed"},
		{"invalid YAML", "a", "---\nname: a\n  bad: [\n---\n", 1, "invalid YAML"},
		{"not a mapping", "a", "---\n- a\n- b\n---\n", 2, "must be a YAML mapping"},
		{"missing name", "a", "---\n" + desc + "---\n", 2, "missing required key: name"},
		{"missing description", "a", "---\nname: a\n---\n", 2, "missing required key: description"},
		{"empty name", "a", "---\nname: ''\n" + desc + "---\n", 2, "name must be a non-empty string"},
		{"empty description", "a", "---\nname: a\ndescription: '  '\n---\n", 3, "description must be a non-empty string"},
		{"description not a string", "a", "---\nname: a\ndescription:\n  x: y\n---\n", 4, "description must be a non-empty string"},
		{"description too long", "a", "---\nname: a\ndescription: " + strings.Repeat("é", 1025) + "\n---\n", 3, "1025 characters, over the 1024-character limit"},
		{"compatibility too long", "a", "---\nname: a\n" + desc + "compatibility: " + strings.Repeat("c", 501) + "\n---\n", 4, "over the 500-character limit"},
		{"uppercase name", "PDF", "---\nname: PDF\n" + desc + "---\n", 2, "must be lowercase"},
		{"leading hyphen", "-pdf", "---\nname: -pdf\n" + desc + "---\n", 2, "must not start or end with a hyphen"},
		{"trailing hyphen", "pdf-", "---\nname: pdf-\n" + desc + "---\n", 2, "must not start or end with a hyphen"},
		{"consecutive hyphens", "a--b", "---\nname: a--b\n" + desc + "---\n", 2, "consecutive hyphens"},
		{"underscore", "a_b", "---\nname: a_b\n" + desc + "---\n", 2, "only letters, digits and hyphens"},
		{"name too long", strings.Repeat("a", 65), "---\nname: " + strings.Repeat("a", 65) + "\n" + desc + "---\n", 2, "over the 64-character limit"},
		{"folder does not match", "other", "---\nname: pdf\n" + desc + "---\n", 2, `folder name "other" must match the skill's name "pdf"`},
		{"unknown keys", "a", "---\nname: a\n" + desc + "version: 1\nauthor: me\n---\n", 5, "unexpected front-matter keys: author, version"},
		{"flow mapping", "a", "---\nname: a\n" + desc + "metadata: {a: b}\n---\n", 4, "flow style"},
		{"flow sequence", "a", "---\nname: a\n" + desc + "allowed-tools: [Read, Bash]\n---\n", 4, "flow style"},
		{"duplicate key", "a", "---\nname: a\n" + desc + "name: a\n---\n", 4, `duplicate key "name"`},
		{"duplicate metadata key", "a", "---\nname: a\n" + desc + "metadata:\n  k: 1\n  k: 2\n---\n", 6, `duplicate key "k"`},
		{"anchor", "a", "---\nname: &n a\n" + desc + "---\n", 2, "anchors and aliases"},
		{"tag", "a", "---\nname: !!str a\n" + desc + "---\n", 2, "tags are not allowed"},
		{"not UTF-8", "a", "---\nname: a\ndescription: \xff\n---\n", 0, "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSkill(t, tc.folder, tc.content)
			file := filepath.Join(dir, skills.File)
			_, probs := skills.Parse(dir)
			var found bool
			for _, p := range probs {
				if p.File != file {
					t.Errorf("problem names file %q, want %q", p.File, file)
				}
				if strings.Contains(p.Message, tc.want) {
					found = true
					if p.Line != tc.line {
						t.Errorf("%q at line %d, want %d", p.Message, p.Line, tc.line)
					}
					if tc.line > 0 && !strings.HasPrefix(p.String(), file+":"+itoa(tc.line)+": ") {
						t.Errorf("String() = %q does not name file and line", p.String())
					}
				}
			}
			if !found {
				t.Fatalf("want a problem containing %q, got %v", tc.want, probs)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestParse_MissingAndOversizedFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, probs := skills.Parse(dir)
	if len(probs) != 1 || probs[0].File != dir || !strings.Contains(probs[0].Message, "missing required file: SKILL.md") {
		t.Errorf("missing file: %v", probs)
	}

	dir = writeSkill(t, "big", "---\nname: big\ndescription: x\n---\n"+strings.Repeat("x", skills.MaxSkillFileBytes))
	_, probs = skills.Parse(dir)
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "larger than") {
		t.Errorf("oversized file: %v", probs)
	}

	// skills-ref also accepts skill.md.
	dir = filepath.Join(t.TempDir(), "lower")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skill.md"), []byte("---\nname: lower\ndescription: x\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, probs := skills.Parse(dir); len(probs) > 0 || s.File != filepath.Join(dir, "skill.md") {
		t.Errorf("skill.md: %+v %v", s, probs)
	}
}

func TestParse_SymlinkOutsideFolder(t *testing.T) {
	dir := writeSkill(t, "esc", "---\nname: esc\ndescription: x\n---\n")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "leak")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(skills.File, filepath.Join(dir, "inside")); err != nil {
		t.Fatal(err)
	}
	_, probs := skills.Parse(dir)
	if len(probs) != 1 || probs[0].File != filepath.Join(dir, "leak") || !strings.Contains(probs[0].Message, "outside the skill's folder") {
		t.Errorf("got %v", probs)
	}
}
