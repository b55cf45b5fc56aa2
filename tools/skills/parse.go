// Package skills is Agent Skills (the agentskills.io specification): a
// skill is a folder with a SKILL.md whose YAML front matter names and
// describes it, a Markdown body of instructions, and optional files
// (scripts/, references/, assets/). The package finds skills in source
// folders and git checkouts, validates them as the specification's
// reference validator (skills-ref) does, and offers the skill tool that
// loads a skill's body and files on demand (progressive disclosure).
//
// It imports only tools and the standard library (and YAML).
package skills

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// Limits of the specification and of brain.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
	// MaxSkillFileBytes caps SKILL.md: the body is loaded whole into the
	// model's context, so a larger one is a mistake (the specification
	// advises splitting long instructions into reference files).
	MaxSkillFileBytes = 256 << 10
	// MaxFiles and MaxFolderBytes cap a skill folder: it is hashed on
	// every load and mounted into sandboxes.
	MaxFiles       = 1000
	MaxFolderBytes = 64 << 20
)

// File is the skill's file name; skills-ref also accepts skill.md.
const File = "SKILL.md"

// allowedKeys are the front-matter keys of the specification.
var allowedKeys = []string{"allowed-tools", "compatibility", "description", "license", "metadata", "name"}

// Skill is a parsed SKILL.md.
type Skill struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	AllowedTools  string
	Metadata      map[string]string
	// Dir is the skill's folder; File is its SKILL.md (or skill.md).
	Dir  string
	File string
	// Body is the Markdown after the front matter.
	Body string
}

// Problem is one reason a skill is invalid, at a file and line (0 when
// the problem has no line, e.g. a missing file).
type Problem struct {
	File    string
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

// Parse reads and validates the skill in dir. It returns the skill (as far
// as it could be read) and every problem found; no problems means valid.
func Parse(dir string) (Skill, []Problem) {
	s := Skill{Dir: dir}
	file := findFile(dir)
	if file == "" {
		return s, []Problem{{File: dir, Message: "missing required file: " + File}}
	}
	s.File = file
	data, err := readCapped(file, MaxSkillFileBytes)
	if err != nil {
		return s, []Problem{{File: file, Message: err.Error()}}
	}
	s, probs := parseFile(s, data)
	if len(probs) == 0 {
		probs = append(probs, checkFolder(dir)...)
	}
	return s, probs
}

// findFile is dir's SKILL.md, else skill.md, else "".
func findFile(dir string) string {
	for _, name := range []string{File, "skill.md"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}

// parseFile splits the front matter from the body and validates it.
func parseFile(s Skill, data []byte) (Skill, []Problem) {
	bad := func(line int, format string, args ...any) []Problem {
		return []Problem{{File: s.File, Line: line, Message: fmt.Sprintf(format, args...)}}
	}
	if !utf8.Valid(data) {
		return s, bad(0, "not UTF-8 text")
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---") {
		return s, bad(1, "must start with YAML front matter (---)")
	}
	lines := strings.SplitAfter(text, "\n")
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			end = i
			break
		}
	}
	if end < 0 || strings.TrimRight(lines[0], " \t\n") != "---" {
		return s, bad(1, "front matter is not closed with ---")
	}
	front := strings.Join(lines[1:end], "")
	s.Body = strings.TrimSpace(strings.Join(lines[end+1:], ""))
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		return s, bad(1, "invalid YAML in front matter: %v", shiftYAMLError(err))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return s, bad(2, "front matter must be a YAML mapping")
	}
	m := doc.Content[0]
	if p := strictProblem(m); p != nil {
		return s, bad(p.Line+1, "%s", p.Message)
	}
	var probs []Problem
	add := func(n *yaml.Node, format string, args ...any) {
		line := 2
		if n != nil {
			line = n.Line + 1 // the front matter starts on line 2
		}
		probs = append(probs, Problem{File: s.File, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	keys := map[string]*yaml.Node{}
	var extra []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		keys[k] = m.Content[i+1]
		if !slices.Contains(allowedKeys, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		add(keys[extra[0]], "unexpected front-matter keys: %s (allowed: %s)", strings.Join(extra, ", "), strings.Join(allowedKeys, ", "))
	}
	if n, ok := keys["name"]; !ok {
		add(nil, "missing required key: name")
	} else {
		s.Name = strings.TrimSpace(scalar(n))
		for _, msg := range checkName(s.Name, filepath.Base(s.Dir)) {
			add(n, "%s", msg)
		}
	}
	if n, ok := keys["description"]; !ok {
		add(nil, "missing required key: description")
	} else {
		s.Description = strings.TrimSpace(scalar(n))
		switch c := utf8.RuneCountInString(scalar(n)); {
		case n.Kind != yaml.ScalarNode || s.Description == "":
			add(n, "description must be a non-empty string")
		case c > MaxDescriptionLength:
			add(n, "description is %d characters, over the %d-character limit", c, MaxDescriptionLength)
		}
	}
	if n, ok := keys["compatibility"]; ok {
		s.Compatibility = scalar(n)
		if c := utf8.RuneCountInString(s.Compatibility); n.Kind != yaml.ScalarNode {
			add(n, "compatibility must be a string")
		} else if c > MaxCompatibilityLength {
			add(n, "compatibility is %d characters, over the %d-character limit", c, MaxCompatibilityLength)
		}
	}
	if n, ok := keys["license"]; ok {
		s.License = scalar(n)
	}
	if n, ok := keys["allowed-tools"]; ok {
		s.AllowedTools = scalar(n)
	}
	if n, ok := keys["metadata"]; ok && n.Kind == yaml.MappingNode {
		s.Metadata = map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			s.Metadata[n.Content[i].Value] = scalar(n.Content[i+1])
		}
	}
	return s, probs
}

// checkName applies the specification's name rules as skills-ref does:
// NFKC-normalised, at most 64 characters, lowercase letters, digits and
// hyphens, no leading, trailing or doubled hyphen, equal to the folder.
func checkName(name, dir string) []string {
	if name == "" {
		return []string{"name must be a non-empty string"}
	}
	name = norm.NFKC.String(name)
	var out []string
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		out = append(out, fmt.Sprintf("name %q is %d characters, over the %d-character limit", name, n, MaxNameLength))
	}
	if name != strings.ToLower(name) {
		out = append(out, fmt.Sprintf("name %q must be lowercase", name))
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		out = append(out, "name must not start or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		out = append(out, "name must not contain consecutive hyphens")
	}
	if strings.IndexFunc(name, func(r rune) bool { return r != '-' && !unicode.IsLetter(r) && !unicode.IsNumber(r) }) >= 0 {
		out = append(out, fmt.Sprintf("name %q may contain only letters, digits and hyphens", name))
	}
	if norm.NFKC.String(dir) != name {
		out = append(out, fmt.Sprintf("folder name %q must match the skill's name %q", dir, name))
	}
	return out
}

// strictProblem refuses what skills-ref's parser (StrictYAML) refuses in
// the front matter: flow style ({...}, [...]), anchors, aliases, tags and
// duplicate keys. Its Line is relative to the front matter.
func strictProblem(n *yaml.Node) *Problem {
	switch {
	case n.Kind == yaml.AliasNode || n.Anchor != "":
		return &Problem{Line: n.Line, Message: "anchors and aliases are not allowed in front matter"}
	case n.Kind != yaml.ScalarNode && n.Style&yaml.FlowStyle != 0:
		return &Problem{Line: n.Line, Message: "flow style ({...} or [...]) is not allowed in front matter; use block style"}
	case n.Style&yaml.TaggedStyle != 0:
		return &Problem{Line: n.Line, Message: "tags are not allowed in front matter"}
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if seen[k] {
				return &Problem{Line: n.Content[i].Line, Message: fmt.Sprintf("duplicate key %q", k)}
			}
			seen[k] = true
		}
	}
	for _, c := range n.Content {
		if p := strictProblem(c); p != nil {
			return p
		}
	}
	return nil
}

// scalar is a node's text: as StrictYAML reads it, every scalar is a
// string ("1.0" and 1.0 alike); a non-scalar is "".
func scalar(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// shiftYAMLError leaves the YAML library's message, whose line numbers
// count from the front matter's first line.
func shiftYAMLError(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// checkFolder applies brain's limits to the folder: file count, total
// size, and no symlink leading outside it (files are read and mounted).
func checkFolder(dir string) []Problem {
	var probs []Problem
	files, total := 0, int64(0)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil || !within(dir, target) {
				probs = append(probs, Problem{File: p, Message: "symbolic link leads outside the skill's folder"})
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files++
		total += fi.Size()
		return nil
	})
	if err != nil {
		probs = append(probs, Problem{File: dir, Message: fmt.Sprintf("cannot read the folder: %v", err)})
	}
	if files > MaxFiles {
		probs = append(probs, Problem{File: dir, Message: fmt.Sprintf("%d files, over the %d-file limit", files, MaxFiles)})
	}
	if total > MaxFolderBytes {
		probs = append(probs, Problem{File: dir, Message: fmt.Sprintf("%d bytes, over the %d-byte limit", total, MaxFolderBytes)})
	}
	return probs
}

// within reports whether path is dir or below it (both cleaned, dir's
// symlinks resolved).
func within(dir, path string) bool {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
