package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"brain/tools"
	"brain/tools/skills"
	"brain/tools/skills/skillstest"
)

// skillTool is the skill tool over a catalog of one folder source with
// the skills pdf and docx, offering only pdf; it returns the tool and
// pdf's folder.
func skillTool(t *testing.T) (tools.Definition, string) {
	t.Helper()
	dir := t.TempDir()
	skillstest.Write(t, dir, map[string]string{
		"pdf/SKILL.md":           skillMD("pdf", "PDFs."),
		"pdf/references/api.md":  "# API\n",
		"pdf/scripts/fill.py":    "print('hi')\n",
		"pdf/exact.txt":          strings.Repeat("e", skills.MaxReadBytes),
		"pdf/big.txt":            strings.Repeat("b", skills.MaxReadBytes+1),
		"pdf/assets/logo.png":    "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"pdf/assets/latin1.txt":  "caf\xe9\n",
		"pdf/assets/nul.txt":     "a\x00b\n",
		"docx/SKILL.md":          skillMD("docx", "Word."),
		"docx/references/doc.md": "other skill\n",
	})
	cat, probs := skills.Load(t.TempDir(), []skills.Source{{Name: "local", Dir: dir}})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return skills.Tool(cat, []string{"pdf"}, "/skills"), filepath.Join(dir, "pdf")
}

func runTool(t *testing.T, def tools.Definition, input string) (skills.Loaded, error) {
	t.Helper()
	out, err := def.Run(context.Background(), tools.Call{Input: json.RawMessage(input)})
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) || te.UnknownOutcome {
			t.Errorf("error %v is not a failed tool error", err)
		}
		return skills.Loaded{}, err
	}
	var l skills.Loaded
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatal(err)
	}
	return l, nil
}

func TestTool_LoadsBodyAndFiles(t *testing.T) {
	def, dir := skillTool(t)
	l, err := runTool(t, def, `{"name":"pdf"}`)
	if err != nil {
		t.Fatal(err)
	}
	want, err := skills.Hash(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Name != "pdf" || l.Body != "Instructions of pdf." || l.Hash != want || l.Mount != "/skills/pdf" {
		t.Errorf("got %+v", l)
	}
	if !slices.Equal(l.Files, []string{"assets/latin1.txt", "assets/logo.png", "assets/nul.txt", "big.txt", "exact.txt", "references/api.md", "scripts/fill.py"}) {
		t.Errorf("Files = %v", l.Files)
	}
	for _, p := range []string{"references/api.md", "./references/api.md", "references/../references/api.md"} {
		l, err = runTool(t, def, `{"name":"pdf","path":"`+p+`"}`)
		if err != nil || l.Content != "# API\n" || l.Path != "references/api.md" {
			t.Errorf("path %s: %+v %v", p, l, err)
		}
	}
	if l, err = runTool(t, def, `{"name":"pdf","path":"exact.txt"}`); err != nil || len(l.Content) != skills.MaxReadBytes {
		t.Errorf("file at the cap: %d bytes, %v", len(l.Content), err)
	}
}

func TestTool_Refuses(t *testing.T) {
	def, dir := skillTool(t)
	outside := filepath.Join(filepath.Dir(dir), "docx", "references", "doc.md")
	for _, tc := range []struct{ input, want string }{
		{`{"name":"docx"}`, `no skill "docx" for this agent`},
		{`{"name":"nope"}`, `no skill "nope"`},
		{`{"name":"pdf","path":"../docx/references/doc.md"}`, "leaves the skill's folder"},
		{`{"name":"pdf","path":"references/../../docx/SKILL.md"}`, "leaves the skill's folder"},
		{`{"name":"pdf","path":".."}`, "leaves the skill's folder"},
		{`{"name":"pdf","path":"` + outside + `"}`, "leaves the skill's folder"},
		{`{"name":"pdf","path":"/etc/passwd"}`, "leaves the skill's folder"},
		{`{"name":"pdf","path":"."}`, "names the folder itself"},
		{`{"name":"pdf","path":"a\u0000b"}`, "NUL byte"},
		{`{"name":"pdf","path":"missing.md"}`, "no file missing.md in the skill"},
		{`{"name":"pdf","path":"references"}`, "references is not a file"},
		{`{"name":"pdf","path":"big.txt"}`, "over the 131072-byte limit"},
		{`{"name":"pdf","path":"assets/logo.png"}`, "not a text file"},
		{`{"name":"pdf","path":"assets/latin1.txt"}`, "not a text file"},
		{`{"name":"pdf","path":"assets/nul.txt"}`, "not a text file"},
		{`{"name":1}`, "input is not valid"},
	} {
		_, err := runTool(t, def, tc.input)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.input, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), dir) {
			t.Errorf("%s: error %q shows the host folder", tc.input, err)
		}
	}
}

// A symbolic link placed after the catalog loaded makes the skill invalid
// (its folder is re-read at each load), and os.Root would refuse it anyway.
func TestTool_SymlinkAddedLater(t *testing.T) {
	def, dir := skillTool(t)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	l, err := runTool(t, def, `{"name":"pdf","path":"leak.txt"}`)
	if err == nil || strings.Contains(l.Content, "secret") || !strings.Contains(err.Error(), "is invalid now") {
		t.Errorf("got %+v %v", l, err)
	}
}
