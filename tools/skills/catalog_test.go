package skills_test

import (
	"slices"
	"strings"
	"testing"

	"brain/tools/skills"
	"brain/tools/skills/skillstest"
)

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nInstructions of " + name + ".\n"
}

func TestCatalog_Match(t *testing.T) {
	dir := t.TempDir()
	skillstest.Write(t, dir, map[string]string{
		"pdf/SKILL.md":       skillMD("pdf", "PDFs."),
		"pdf-forms/SKILL.md": skillMD("pdf-forms", "Forms."),
		"docx/SKILL.md":      skillMD("docx", "Word."),
		"notes/README.md":    "not a skill",
		".hidden/SKILL.md":   skillMD("hidden", "Skipped."),
	})
	cat, probs := skills.Load(t.TempDir(), []skills.Source{{Name: "local", Dir: dir}})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if got := cat.Names(); !slices.Equal(got, []string{"docx", "pdf", "pdf-forms"}) {
		t.Errorf("Names = %v", got)
	}
	for pattern, want := range map[string][]string{
		"pdf":   {"pdf"},
		"pdf*":  {"pdf", "pdf-forms"},
		"*":     {"docx", "pdf", "pdf-forms"},
		"?ocx":  {"docx"},
		"pdf-":  nil,
		"[":     nil, // a bad pattern matches nothing
		"x*":    nil,
		"*orms": {"pdf-forms"},
	} {
		if got := cat.Match(pattern); !slices.Equal(got, want) {
			t.Errorf("Match(%q) = %v, want %v", pattern, got, want)
		}
	}
	l := cat.Listing([]string{"pdf", "docx"}, "/skills")
	if !strings.Contains(l, "<name>docx</name>\n<description>Word.</description>") || strings.Index(l, "docx") > strings.Index(l, "<name>pdf</name>") ||
		!strings.Contains(l, "/skills/<name>") || strings.Contains(l, "pdf-forms") {
		t.Errorf("Listing:\n%s", l)
	}
}

func TestCatalog_DuplicateNamesRefused(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	skillstest.Write(t, a, map[string]string{"pdf/SKILL.md": skillMD("pdf", "From a.")})
	skillstest.Write(t, b, map[string]string{"pdf/SKILL.md": skillMD("pdf", "From b."), "docx/SKILL.md": skillMD("docx", "Word.")})
	cat, probs := skills.Load(t.TempDir(), []skills.Source{{Name: "a", Dir: a}, {Name: "b", Dir: b}})
	if len(probs) != 1 || !strings.Contains(probs[0].Message, `skill "pdf" is also in source a`) || !strings.HasPrefix(probs[0].File, b) {
		t.Fatalf("problems %v", probs)
	}
	if e, _ := cat.Entry("pdf"); e.Description != "From a." || e.Source.Name != "a" {
		t.Errorf("pdf entry %+v", e)
	}
}

func TestCatalog_LoadProblems(t *testing.T) {
	dir := t.TempDir()
	skillstest.Write(t, dir, map[string]string{
		"good/SKILL.md": skillMD("good", "Fine."),
		"bad/SKILL.md":  skillMD("Bad", "Upper."),
	})
	cat, probs := skills.Load(t.TempDir(), []skills.Source{
		{Name: "local", Dir: dir},
		{Name: "missing", Dir: dir + "/nope"},
		{Name: "remote", Git: "file:///nowhere.git", Ref: "main"},
	})
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"bad/SKILL.md:2: name \"Bad\" must be lowercase", "skills source missing:", "skills source remote (file:///nowhere.git@main) is not fetched yet"} {
		if !strings.Contains(all, want) {
			t.Errorf("want %q in:\n%s", want, all)
		}
	}
	if !slices.Equal(cat.Names(), []string{"good"}) {
		t.Errorf("Names = %v", cat.Names())
	}
}
