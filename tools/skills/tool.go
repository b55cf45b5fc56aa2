package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"brain/tools"
)

// ToolName is the skill tool's name (engine.SkillTool records its loads
// as skill.loaded).
const ToolName = "skill"

// MaxReadBytes caps one file the skill tool returns; larger files are
// for scripts in the sandbox, not for the model's context.
const MaxReadBytes = 128 << 10

// maxListed caps the file list returned with a skill's body.
const maxListed = 200

// Loaded is the skill tool's output: a skill's body (Path empty) or one
// of its files. The engine reads Name, Hash and Body to record skill.loaded.
type Loaded struct {
	Name    string   `json:"name"`
	Hash    string   `json:"hash"`
	Body    string   `json:"body,omitempty"`
	Files   []string `json:"files,omitempty"`
	Mount   string   `json:"mounted_at,omitempty"`
	Path    string   `json:"path,omitempty"`
	Content string   `json:"content,omitempty"`
}

// Tool is the skill tool over the named skills of c: with a name it
// returns the skill's instructions (SKILL.md's body) and its file list;
// with a name and a path, that file (confined to the skill's folder,
// text only, at most MaxReadBytes). mount is where sandbox_exec mounts
// skill folders ("" = no sandbox).
func Tool(c *Catalog, names []string, mount string) tools.Definition {
	names = slices.Sorted(slices.Values(names))
	enum, _ := json.Marshal(names)
	in := fmt.Sprintf(`{"type":"object","properties":{`+
		`"name":{"type":"string","enum":%s,"description":"The skill's name, as listed in your instructions."},`+
		`"path":{"type":"string","maxLength":1024,"description":"A file of the skill, relative to its folder (e.g. references/api.md); omit it to load the skill's instructions."}},`+
		`"required":["name"],"additionalProperties":false}`, enum)
	return tools.Definition{
		Name: ToolName,
		Description: "Load one of your skills: without path, its instructions and the list of its files; with path, one of its " +
			"text files (references, templates, scripts to read). Load a skill before doing a task it covers.",
		Input: json.RawMessage(in),
		Run: func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
			var req struct {
				Name string `json:"name"`
				Path string `json:"path"`
			}
			if err := json.Unmarshal(call.Input, &req); err != nil {
				return nil, tools.Failed("skill: input is not valid: %v", err)
			}
			if !slices.Contains(names, req.Name) {
				return nil, tools.Failed("skill: no skill %q for this agent (its skills: %s)", req.Name, strings.Join(names, ", "))
			}
			out, err := load(c, req.Name, req.Path, mount)
			if err != nil {
				return nil, tools.Failed("skill: %v", err)
			}
			return json.Marshal(out)
		},
	}
}

func load(c *Catalog, name, file, mount string) (Loaded, error) {
	s, hash, err := c.Read(name)
	if err != nil {
		return Loaded{}, err
	}
	out := Loaded{Name: name, Hash: hash}
	if file == "" {
		out.Body = s.Body
		out.Files, err = listFiles(s.Dir)
		if mount != "" {
			out.Mount = mount + "/" + name
		}
		return out, err
	}
	rel, err := cleanPath(file)
	if err != nil {
		return Loaded{}, err
	}
	out.Path = rel
	out.Content, err = readConfined(s.Dir, rel)
	return out, err
}

// cleanPath is p as a slash path inside the skill's folder; absolute
// paths and paths leaving the folder are refused.
func cleanPath(p string) (string, error) {
	c := path.Clean(strings.TrimPrefix(p, "./"))
	switch {
	case p == "" || strings.ContainsRune(p, 0):
		return "", errors.New("path is empty or has a NUL byte")
	case path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../"):
		return "", fmt.Errorf("path %q leaves the skill's folder; give a path relative to it", p)
	case c == ".":
		return "", errors.New("path names the folder itself; omit path to load the skill")
	}
	return c, nil
}

// readConfined reads rel inside dir through an os.Root, so neither ".."
// nor a symbolic link can lead outside the folder.
func readConfined(dir, rel string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no file %s in the skill", rel)
		}
		return "", fmt.Errorf("cannot open %s: %v", rel, trimRoot(err, dir))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a file", rel)
	}
	if fi.Size() > MaxReadBytes {
		return "", fmt.Errorf("%s is %d bytes, over the %d-byte limit of a read; use it from the sandbox instead", rel, fi.Size(), MaxReadBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) > MaxReadBytes {
		return "", fmt.Errorf("%s is over the %d-byte limit of a read", rel, MaxReadBytes)
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return "", fmt.Errorf("%s is not a text file; use it from the sandbox instead", rel)
	}
	return string(data), nil
}

// trimRoot keeps the host path of the skill folder out of an error.
func trimRoot(err error, dir string) string {
	return strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
}

// listFiles lists the folder's files other than SKILL.md, as slash paths.
func listFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == File || rel == "skill.md" || rel == ".brain-commit" {
			return nil
		}
		if len(out) == maxListed {
			out = append(out, fmt.Sprintf("... (more than %d files)", maxListed))
			return filepath.SkipAll
		}
		out = append(out, rel)
		return nil
	})
	return out, err
}
