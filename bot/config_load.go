package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadConfig reads the YAML file at path, expands ${VAR} and ${VAR:-default}
// in scalar values with env (callers pass os.LookupEnv), rejects unknown keys,
// applies defaults and validates. An unset variable expands to "" and is
// reported by MissingEnv rather than failing, so a daemon without, say, its
// model key still boots.
func LoadConfig(path string, env func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := parseConfig(data, env)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	c.ApplyDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	return c, nil
}

func parseConfig(data []byte, env func(string) (string, bool)) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	c := &Config{}
	if root.Kind == 0 {
		return c, nil // empty file: Validate reports what is missing
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the top level must be a mapping of keys", doc.Line)
	}

	// Expanding in the node tree, after parsing, means a variable's value is
	// always one scalar: YAML syntax in it cannot add keys or change the type
	// of a neighbouring value.
	x := &expander{env: env, missing: map[string]bool{}, unsetAt: map[string][]string{}, expanded: map[*yaml.Node]bool{}}
	x.walk(doc, "")

	// yaml.Node.Decode ignores KnownFields, so unknown keys are found by
	// walking the tree against the Go types, which also names the key path.
	tw := &typedWalk{expanded: x.expanded}
	tw.errs = canonicalToolKeys(doc)
	tw.walk(doc, reflect.TypeFor[Config](), "")
	errs := tw.errs
	if err := root.Decode(c); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for name := range x.missing {
		c.missingEnv = append(c.missingEnv, name)
	}
	slices.Sort(c.missingEnv)
	c.unsetAt = x.unsetAt
	c.headerEnv = x.headerEnv
	return c, nil
}

// versionedTool matches a built-in's versioned type, as in web_search_20250305.
var versionedTool = regexp.MustCompile(`^(web_search|web_fetch|sandbox_exec)_\d{8}$`)

// CanonicalTool returns the canonical name of a built-in tool type:
// web_search_20250305 -> web_search. Other names are returned as they are.
func CanonicalTool(name string) string {
	if m := versionedTool.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

// canonicalToolKeys renames versioned built-in keys under tools to their
// canonical key, so tools.web_search_20250305 configures web_search.
func canonicalToolKeys(doc *yaml.Node) []error {
	var tools *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "tools" && doc.Content[i+1].Kind == yaml.MappingNode {
			tools = doc.Content[i+1]
		}
	}
	if tools == nil {
		return nil
	}
	var errs []error
	seen := map[string]int{} // canonical key -> line
	for i := 0; i+1 < len(tools.Content); i += 2 {
		k := tools.Content[i]
		name := CanonicalTool(k.Value)
		if line, dup := seen[name]; dup {
			errs = append(errs, fmt.Errorf("tools.%s: configures %s again (line %d, first at line %d)", k.Value, name, k.Line, line))
		}
		seen[name] = k.Line
		k.Value = name
	}
	return errs
}

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

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// typedWalk walks the node tree along the Go type it decodes into. It reports
// mapping keys that have no field, and turns expanded text back into a YAML
// value where the field is a number or a bool ("" = absent). Merge keys and
// aliases are skipped: their anchor is checked where it is defined.
type typedWalk struct {
	expanded map[*yaml.Node]bool
	errs     []error
}

func (w *typedWalk) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch {
	case n.Kind == yaml.ScalarNode && w.expanded[n]:
		switch t.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			n.Tag, n.Style = "", 0
			if n.Value == "" {
				n.Tag = "!!null"
			}
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := map[string]reflect.Type{}
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.IsExported() && name != "" {
				fields[name] = f.Type
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.ShortTag() == "!!merge" {
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				w.errs = append(w.errs, fmt.Errorf("%s: unknown key (line %d)", joinKey(path, k.Value), k.Line))
				continue
			}
			w.walk(n.Content[i+1], ft, joinKey(path, k.Value))
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.ShortTag() != "!!merge" {
				w.walk(n.Content[i+1], t.Elem(), joinKey(path, k.Value))
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func appendJSON(b []byte, n *yaml.Node) ([]byte, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return append(b, "null"...), nil
		}
		return appendJSON(b, n.Content[0])
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, c); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case yaml.MappingNode:
		if !hasMergeKey(n) {
			b = append(b, '{')
			for i := 0; i+1 < len(n.Content); i += 2 {
				if i > 0 {
					b = append(b, ',')
				}
				k, _ := json.Marshal(n.Content[i].Value)
				b = append(append(b, k...), ':')
				var err error
				if b, err = appendJSON(b, n.Content[i+1]); err != nil {
					return nil, err
				}
			}
			return append(b, '}'), nil
		}
	}
	// Scalars, aliases and merges: let the YAML decoder (and its alias
	// safeguards) produce the value.
	var x any
	if err := n.Decode(&x); err != nil {
		return nil, err
	}
	j, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %w", err)
	}
	return append(b, j...), nil
}

func hasMergeKey(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].ShortTag() == "!!merge" {
			return true
		}
	}
	return false
}
