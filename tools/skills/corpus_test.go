package skills_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"brain/tools/skills"
)

// The corpus: real public skills (testdata/corpus, from anthropics/skills,
// Apache-2.0, each with its LICENSE.txt) and mutations of them, each a
// change the specification's rules speak to. The specification's reference
// validator (skills-ref, vendored in testdata/skillsref) judged every case
// once; its verdicts are in testdata/corpus_verdicts.json. Brain's validator
// must give the same verdict for each case. When python3 with strictyaml is
// here, the reference is run again and must still agree with the file, so
// the file cannot go stale; -update-verdicts rewrites it from that run:
//
//	go test ./tools/skills -run TestCorpus_AgreesWithSkillsRef -update-verdicts
var updateVerdicts = flag.Bool("update-verdicts", false, "rewrite testdata/corpus_verdicts.json from skills-ref's run")

const corpusDir = "testdata/corpus"

// mutation makes one case from a real skill: folder is the case's folder
// name ("" = the base skill's), edit changes its SKILL.md.
type mutation struct {
	name, base, folder string
	file               string // "" = SKILL.md
	edit               func(string) string
}

// replace returns an edit replacing old with new once (the test fails if
// old is not there: a mutation that changes nothing proves nothing).
func replace(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			return "MUTATION DID NOT APPLY: " + old
		}
		return strings.Replace(s, old, new, 1)
	}
}

// setLine returns an edit replacing the first line that starts with
// prefix (its newline kept) with line; "" removes the line.
func setLine(prefix, line string) func(string) string {
	return func(s string) string {
		i := strings.Index(s, "\n"+prefix)
		if i < 0 {
			return "MUTATION DID NOT APPLY: " + prefix
		}
		j := i + 1 + strings.Index(s[i+1:], "\n")
		if line == "" {
			return s[:i+1] + s[j+1:]
		}
		return s[:i+1] + line + s[j:]
	}
}

func setName(n string) func(string) string { return setLine("name:", "name: "+n) }
func setDesc(d string) func(string) string { return setLine("description:", "description: "+d) }

var mutations = []mutation{
	// Valid changes: what the specification allows.
	{name: "add-metadata", base: "brand-guidelines", edit: replace("license:", "metadata:\n  author: example-org\n  version: \"1.0\"\nlicense:")},
	{name: "add-compatibility", base: "brand-guidelines", edit: replace("license:", "compatibility: Requires git and network access\nlicense:")},
	{name: "add-allowed-tools", base: "brand-guidelines", edit: replace("license:", "allowed-tools: Bash(git:*) Read\nlicense:")},
	{name: "lowercase-file-name", base: "internal-comms", file: "skill.md", edit: func(s string) string { return s }},
	{name: "crlf-line-endings", base: "internal-comms", edit: func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }},
	{name: "folded-description", base: "brand-guidelines", edit: setDesc(">\n  Applies brand colors\n  to artifacts.")},
	{name: "quoted-name", base: "brand-guidelines", edit: setName("\"brand-guidelines\"")},
	{name: "unicode-lowercase-name", base: "brand-guidelines", folder: "données", edit: setName("données")},
	{name: "numeric-name", base: "brand-guidelines", folder: "2024", edit: setName("2024")},
	{name: "name-64-characters", base: "brand-guidelines", folder: strings.Repeat("b", 64), edit: setName(strings.Repeat("b", 64))},
	{name: "description-1024-characters", base: "brand-guidelines", edit: setDesc(strings.Repeat("d", 1024))},
	{name: "nested-metadata", base: "brand-guidelines", edit: replace("license:", "metadata:\n  owner:\n    team: design\nlicense:")},
	{name: "dashes-in-description", base: "brand-guidelines", edit: setDesc("Applies brand colors---fonts too.")},
	{name: "comment-in-front-matter", base: "brand-guidelines", edit: replace("license:", "# reviewed by design\nlicense:")},
	// Invalid changes: each breaks one rule.
	{name: "uppercase-name", base: "brand-guidelines", folder: "Brand-Guidelines", edit: setName("Brand-Guidelines")},
	{name: "name-differs-from-folder", base: "brand-guidelines", folder: "brand", edit: func(s string) string { return s }},
	{name: "leading-hyphen", base: "brand-guidelines", folder: "-brand", edit: setName("-brand")},
	{name: "trailing-hyphen", base: "brand-guidelines", folder: "brand-", edit: setName("brand-")},
	{name: "consecutive-hyphens", base: "brand-guidelines", folder: "brand--guidelines", edit: setName("brand--guidelines")},
	{name: "underscore-in-name", base: "brand-guidelines", folder: "brand_guidelines", edit: setName("brand_guidelines")},
	{name: "space-in-name", base: "brand-guidelines", folder: "brand guidelines", edit: setName("brand guidelines")},
	{name: "name-65-characters", base: "brand-guidelines", folder: strings.Repeat("b", 65), edit: setName(strings.Repeat("b", 65))},
	{name: "missing-name", base: "brand-guidelines", edit: setLine("name:", "")},
	{name: "empty-name", base: "brand-guidelines", edit: setLine("name:", "name:")},
	{name: "missing-description", base: "internal-comms", edit: setLine("description:", "")},
	{name: "empty-description", base: "brand-guidelines", edit: setDesc(`""`)},
	{name: "blank-description", base: "brand-guidelines", edit: setDesc(`"   "`)},
	{name: "description-1025-characters", base: "brand-guidelines", edit: setDesc(strings.Repeat("d", 1025))},
	{name: "description-is-a-list", base: "brand-guidelines", edit: setDesc("\n  - Applies brand colors")},
	{name: "unknown-key", base: "brand-guidelines", edit: replace("license:", "version: 1.0.0\nlicense:")},
	{name: "compatibility-501-characters", base: "brand-guidelines", edit: replace("license:", "compatibility: "+strings.Repeat("c", 501)+"\nlicense:")},
	{name: "no-front-matter", base: "internal-comms", edit: func(s string) string { return s[strings.Index(s[3:], "---")+6:] }},
	{name: "front-matter-not-closed", base: "brand-guidelines", edit: replace("\n---\n", "\n\n")},
	{name: "byte-order-mark", base: "brand-guidelines", edit: func(s string) string { return "\ufeff" + s }},
	{name: "flow-style-metadata", base: "brand-guidelines", edit: replace("license:", "metadata: {author: example-org}\nlicense:")},
	{name: "duplicate-key", base: "brand-guidelines", edit: replace("license:", "name: brand-guidelines\nlicense:")},
	{name: "anchor-and-alias", base: "brand-guidelines", edit: replace("license:", "metadata:\n  a: &x one\n  b: *x\nlicense:")},
	{name: "tag", base: "brand-guidelines", edit: setName("!!str brand-guidelines")},
	{name: "front-matter-is-a-list", base: "brand-guidelines", edit: func(s string) string {
		return "---\n- brand-guidelines\n- Applies brand colors\n" + s[strings.Index(s[3:], "---")+3:]
	}},
}

// corpusCase is one skill folder of the corpus and how to name it.
type corpusCase struct{ name, dir string }

// buildCorpus lists the real skills and writes the mutations under a
// temporary folder.
func buildCorpus(t *testing.T) []corpusCase {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	for _, e := range entries {
		if e.IsDir() {
			abs, err := filepath.Abs(filepath.Join(corpusDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, corpusCase{name: "real/" + e.Name(), dir: abs})
		}
	}
	if len(cases) < 10 {
		t.Fatalf("corpus has %d real skills", len(cases))
	}
	root := t.TempDir()
	for _, m := range mutations {
		src, err := os.ReadFile(filepath.Join(corpusDir, m.base, skills.File))
		if err != nil {
			t.Fatal(err)
		}
		out := m.edit(string(src))
		if strings.HasPrefix(out, "MUTATION DID NOT APPLY") {
			t.Fatalf("mutation %s: %s", m.name, out)
		}
		folder, file := m.folder, m.file
		if folder == "" {
			folder = m.base
		}
		if file == "" {
			file = skills.File
		}
		dir := filepath.Join(root, m.name, folder)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, corpusCase{name: "mutated/" + m.name, dir: dir})
	}
	return cases
}

// verdict is skills-ref's answer on one case: the problems it reported.
type verdict struct {
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors,omitempty"`
}

const verdictsFile = "testdata/corpus_verdicts.json"

func TestCorpus_AgreesWithSkillsRef(t *testing.T) {
	cases := buildCorpus(t)
	golden := map[string]verdict{}
	data, err := os.ReadFile(verdictsFile)
	if err == nil {
		err = json.Unmarshal(data, &golden)
	}
	if err != nil && !*updateVerdicts {
		t.Fatalf("read %s: %v", verdictsFile, err)
	}

	if py := referencePython(t); py != "" {
		ran := runReference(t, py, cases)
		if *updateVerdicts {
			var out bytes.Buffer
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(ran); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(verdictsFile, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			golden = ran
		}
		for _, c := range cases {
			if g, r := golden[c.name], ran[c.name]; g.Valid != r.Valid {
				t.Errorf("%s: skills-ref now says valid=%v %q; %s says valid=%v (rerun with -update-verdicts)", c.name, r.Valid, r.Errors, verdictsFile, g.Valid)
			}
		}
	} else if *updateVerdicts {
		t.Fatal("-update-verdicts needs python3 with strictyaml (Debian: python3-strictyaml)")
	}

	valid, invalid := 0, 0
	for _, c := range cases {
		want, ok := golden[c.name]
		if !ok {
			t.Errorf("%s: no verdict in %s (rerun with -update-verdicts)", c.name, verdictsFile)
			continue
		}
		_, probs := skills.Parse(c.dir)
		if got := len(probs) == 0; got != want.Valid {
			t.Errorf("%s: brain says valid=%v %v; skills-ref says valid=%v %q", c.name, got, probs, want.Valid, want.Errors)
		}
		if want.Valid {
			valid++
		} else {
			invalid++
		}
	}
	if len(golden) != len(cases) {
		t.Errorf("%s has %d verdicts for %d cases", verdictsFile, len(golden), len(cases))
	}
	t.Logf("%d cases: %d valid, %d invalid", len(cases), valid, invalid)
	if valid < 15 || invalid < 15 {
		t.Errorf("the corpus should hold both kinds: %d valid, %d invalid", valid, invalid)
	}
}

// referencePython is a python3 that can import strictyaml, or "" (then
// the test compares with the stored verdicts only, unless
// BRAIN_REQUIRE_SKILLSREF=1, as `make test` sets, makes that a failure).
func referencePython(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("BRAIN_SKILLSREF_PYTHON"), "python3", "/usr/bin/python3"}
	for _, py := range candidates {
		if py == "" {
			continue
		}
		if err := exec.Command(py, "-c", "import strictyaml").Run(); err == nil {
			return py
		}
	}
	if os.Getenv("BRAIN_REQUIRE_SKILLSREF") == "1" {
		t.Fatal("BRAIN_REQUIRE_SKILLSREF=1 but no python3 can import strictyaml (make test-deps installs python3-strictyaml)")
	}
	t.Log("no python3 with strictyaml: comparing with the stored verdicts of skills-ref only")
	return ""
}

// runReference runs skills-ref's validator on every case.
func runReference(t *testing.T, py string, cases []corpusCase) map[string]verdict {
	t.Helper()
	args := []string{"testdata/skillsref/verdicts.py"}
	for _, c := range cases {
		args = append(args, c.dir)
	}
	cmd := exec.Command(py, args...)
	cmd.Env = append(os.Environ(), "PYTHONUTF8=1", "PYTHONDONTWRITEBYTECODE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skills-ref: %v\n%s", err, stderr.String())
	}
	var byDir map[string][]string
	if err := json.Unmarshal(out, &byDir); err != nil {
		t.Fatalf("skills-ref output: %v\n%s", err, out)
	}
	ran := map[string]verdict{}
	for _, c := range cases {
		errs, ok := byDir[c.dir]
		if !ok {
			t.Fatalf("skills-ref said nothing of %s", c.name)
		}
		// Messages may name the temporary folder; keep them readable.
		for i := range errs {
			errs[i] = strings.ReplaceAll(errs[i], filepath.Dir(c.dir)+string(filepath.Separator), "")
		}
		ran[c.name] = verdict{Valid: len(errs) == 0, Errors: slices.Clip(errs)}
	}
	return ran
}
