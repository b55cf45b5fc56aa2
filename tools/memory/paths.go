package memory

import (
	"strings"
	"unicode"

	"brain/tools"
)

// MaxPath bounds a path, /memories included.
const MaxPath = 512

// where is a parsed path: the root (scope == nil), a scope's directory
// (rel == "") or something inside a scope.
type where struct {
	path  string // as the model wrote it, cleaned of a trailing slash
	scope *Scope
	rel   string // inside the scope, no leading slash
}

// parse reads a path under /memories. It refuses anything that could
// name something else: "..", ".", empty segments, backslashes, control
// characters, another root, a scope this session does not have.
func (t *tree) parse(p string) (where, error) {
	raw := p
	if len(p) > MaxPath {
		return where{}, tools.Failed("Error: The path is longer than %d characters", MaxPath)
	}
	p = strings.TrimSuffix(p, "/")
	if p != Root && !strings.HasPrefix(p, Root+"/") {
		return where{}, tools.Failed("Error: The path %s is not in %s; every memory path starts with %s/", raw, Root, Root)
	}
	if strings.IndexFunc(p, func(r rune) bool { return r == '\\' || unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
		return where{}, tools.Failed("Error: The path %q holds a backslash or a control character", raw)
	}
	w := where{path: p}
	if p == Root {
		return w, nil
	}
	segs := strings.Split(strings.TrimPrefix(p, Root+"/"), "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return where{}, tools.Failed("Error: The path %s is not allowed: no empty, '.' or '..' segments", raw)
		}
	}
	for i := range t.where.Scopes {
		if t.where.Scopes[i].Dir == segs[0] {
			w.scope = &t.where.Scopes[i]
			w.rel = strings.Join(segs[1:], "/")
			return w, nil
		}
	}
	if why, ok := t.where.Missing[segs[0]]; ok {
		return where{}, tools.Failed("Error: The path %s does not exist: %s", raw, why)
	}
	return where{}, tools.Failed("The path %s does not exist. Please provide a valid path.", raw)
}

// file parses a path that must name a file inside a scope.
func (t *tree) file(p string) (where, error) {
	w, err := t.parse(p)
	if err != nil {
		return w, err
	}
	if w.scope == nil || w.rel == "" {
		return w, tools.Failed("Error: %s is a directory; only view works on it", w.path)
	}
	return w, nil
}

// display is the path the model sees for a file of a scope.
func display(s *Scope, rel string) string {
	if rel == "" {
		return Root + "/" + s.Dir
	}
	return Root + "/" + s.Dir + "/" + rel
}
