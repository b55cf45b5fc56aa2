package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MissingEnv returns the names of referenced environment variables that were
// unset (and had no ${VAR:-default}), sorted.
func (c *Config) MissingEnv() []string { return slices.Clone(c.missingEnv) }

var (
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerPath     = regexp.MustCompile(`^tools\.http\[\d+\]\.headers\.`)
)

type expander struct {
	env       func(string) (string, bool)
	missing   map[string]bool
	unsetAt   map[string][]string
	headerEnv []string
	expanded  map[*yaml.Node]bool
}

// walk expands scalar values under n. Mapping keys are left alone, and alias
// nodes too: their anchor is expanded where it is defined.
func (x *expander) walk(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			x.walk(c, path)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := path
			if k.ShortTag() != "!!merge" {
				p = joinKey(path, k.Value)
			}
			x.walk(n.Content[i+1], p)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			x.walk(c, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		x.scalar(n, path)
	}
}

// scalar expands one value. The result is text (a plain `${N}` is not
// re-read as YAML); typedWalk converts it where the key wants a number or a
// bool, which also lets `{max_tokens: "${N}"}` work in flow style, where the
// braces must be quoted.
func (x *expander) scalar(n *yaml.Node, path string) {
	if !strings.Contains(n.Value, "${") {
		return
	}
	value, fromEnv, unset := expandEnv(n.Value, x.env)
	for _, name := range unset {
		x.missing[name] = true
	}
	if len(unset) > 0 {
		x.unsetAt[path] = unset
	}
	if headerPath.MatchString(path) {
		x.headerEnv = append(x.headerEnv, fromEnv...)
	}
	n.Value = value
	if n.Style&yaml.TaggedStyle == 0 {
		n.Tag = "!!str"
		x.expanded[n] = true
	}
}

// expandEnv replaces ${VAR} and ${VAR:-default} (default when VAR is unset or
// empty) in s; "$${" is a literal "${". A reference that is not a valid name
// stays as written. It returns the non-empty values taken from env and the
// names that were unset without a default.
func expandEnv(s string, env func(string) (string, bool)) (out string, fromEnv, unset []string) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), fromEnv, unset
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			b.WriteString(s)
			return b.String(), fromEnv, unset
		}
		name, def, hasDef := strings.Cut(s[i+2:i+2+end], ":-")
		if !envNamePattern.MatchString(name) {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		v, ok := env(name)
		switch {
		case v != "":
			fromEnv = append(fromEnv, v)
		case hasDef:
			v = def
		case !ok:
			unset = append(unset, name)
		}
		b.WriteString(v)
		s = s[i+2+end+1:]
	}
}
