package skills

import (
	"fmt"
	"html"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Entry is one skill of the catalog: where it lives and what it said the
// last time it was read valid.
type Entry struct {
	Name        string
	Description string
	Source      Source
	// Hash is the content hash when the catalog was loaded (or last read
	// valid); a load reads the folder again.
	Hash string
}

// Catalog is every skill of the configured sources, by name. It re-reads a
// skill's folder at each use, so an edit or a sync shows in the next
// session without a restart; a skill that became invalid keeps its last
// good listing and fails to load with its problems.
type Catalog struct {
	dataDir string
	mu      sync.Mutex
	entries map[string]Entry
}

// Load scans every source and validates every skill. It returns the
// catalog and every problem (invalid skills, a name found twice, a git
// source never fetched); a caller refuses to start when there are any.
func Load(dataDir string, sources []Source) (*Catalog, []Problem) {
	c := &Catalog{dataDir: dataDir, entries: map[string]Entry{}}
	var probs []Problem
	for _, src := range sources {
		root := src.Root(dataDir)
		if src.IsGit() && src.Fetched(dataDir) == "" {
			probs = append(probs, Problem{File: root, Message: fmt.Sprintf("skills source %s (%s) is not fetched yet; run brain skills sync", src.Name, src.Describe())})
			continue
		}
		dirs, err := Scan(root)
		if err != nil {
			probs = append(probs, Problem{File: root, Message: fmt.Sprintf("skills source %s: %v", src.Name, err)})
			continue
		}
		for _, d := range dirs {
			s, p := Parse(d)
			if len(p) > 0 {
				probs = append(probs, p...)
				continue
			}
			if prev, ok := c.entries[s.Name]; ok {
				probs = append(probs, Problem{File: s.File, Message: fmt.Sprintf("skill %q is also in source %s; skill names must be unique", s.Name, prev.Source.Name)})
				continue
			}
			h, err := Hash(d)
			if err != nil {
				probs = append(probs, Problem{File: d, Message: err.Error()})
				continue
			}
			c.entries[s.Name] = Entry{Name: s.Name, Description: s.Description, Source: src, Hash: h}
		}
	}
	return c, probs
}

// Names lists the catalog's skill names in order.
func (c *Catalog) Names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.entries))
	for n := range c.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Entry returns the named skill's entry.
func (c *Catalog) Entry(name string) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	return e, ok
}

// Match returns the names of the skills matched by pattern (a name or a
// path.Match glob), in order.
func (c *Catalog) Match(pattern string) []string {
	var out []string
	for _, n := range c.Names() {
		if ok, _ := path.Match(pattern, n); ok {
			out = append(out, n)
		}
	}
	return out
}

// Dir is the named skill's folder now, symbolic links resolved, so one
// load reads one checkout even while a sync replaces it.
func (c *Catalog) Dir(name string) (string, error) {
	e, ok := c.Entry(name)
	if !ok {
		return "", fmt.Errorf("no skill %q", name)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(e.Source.Root(c.dataDir), name))
	if err != nil {
		return "", fmt.Errorf("skill %s: %w", name, err)
	}
	return dir, nil
}

// Read parses and hashes the named skill as it is now. A valid read
// refreshes its entry (description, hash); an invalid one returns the
// problems and leaves the entry as it was.
func (c *Catalog) Read(name string) (Skill, string, error) {
	dir, err := c.Dir(name)
	if err != nil {
		return Skill{}, "", err
	}
	s, probs := Parse(dir)
	if len(probs) == 0 && s.Name != name {
		probs = append(probs, Problem{File: s.File, Message: fmt.Sprintf("name changed to %q", s.Name)})
	}
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i] = p.String()
		}
		return Skill{}, "", fmt.Errorf("skill %s is invalid now: %s", name, strings.Join(msgs, "; "))
	}
	h, err := Hash(dir)
	if err != nil {
		return Skill{}, "", err
	}
	c.mu.Lock()
	e := c.entries[name]
	e.Description, e.Hash = s.Description, h
	c.entries[name] = e
	c.mu.Unlock()
	return s, h, nil
}

// Refresh re-reads the named skills' front matter, so a listing built
// after it shows their current descriptions (invalid ones keep their last
// good one).
func (c *Catalog) Refresh(names []string) {
	for _, n := range names {
		dir, err := c.Dir(n)
		if err != nil {
			continue
		}
		s, probs := Parse(dir)
		if len(probs) > 0 || s.Name != n {
			continue
		}
		c.mu.Lock()
		e := c.entries[n]
		e.Description = s.Description
		c.entries[n] = e
		c.mu.Unlock()
	}
}

// Listing is the system-prompt text that offers the named skills: each
// one's name and description, in name order so the prompt prefix stays
// the same from turn to turn (and cacheable). mount is where sandbox_exec
// sees skill folders ("" when the agent has no sandbox).
func (c *Catalog) Listing(names []string, mount string) string {
	if len(names) == 0 {
		return ""
	}
	names = slices.Sorted(slices.Values(names))
	var b strings.Builder
	b.WriteString("# Skills\n\nYou have skills: folders of instructions, and sometimes scripts and reference files, for particular tasks. " +
		"When a task matches a skill's description, call the " + ToolName + " tool with its name and follow the instructions it returns; " +
		"read the files they mention with the same tool and a path.")
	if mount != "" {
		b.WriteString(" In sandbox_exec, each skill's folder is at " + mount + "/<name> (read-only): run its scripts from there.")
	}
	b.WriteString("\n\n<available_skills>\n")
	for _, n := range names {
		e, ok := c.Entry(n)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "<skill>\n<name>%s</name>\n<description>%s</description>\n</skill>\n", html.EscapeString(e.Name), html.EscapeString(e.Description))
	}
	b.WriteString("</available_skills>")
	return b.String()
}
