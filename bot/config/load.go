package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads the YAML file at path, expands ${VAR} and ${VAR:-default}
// in scalar values with env (callers pass os.LookupEnv), rejects unknown keys,
// applies defaults and validates. An unset variable expands to "" and is
// reported by MissingEnv rather than failing, so a daemon without, say, its
// model key still boots.
func Load(path string, env func(string) (string, bool)) (*Config, error) {
	c, err := Check(path, env)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Check is Load for `brain config check`: it also returns the config as
// far as it could be read when there are problems (values of the wrong
// type left out), so more checks can run on it; nil only when the file
// cannot be read or is not YAML.
func Check(path string, env func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := parse(data, env)
	if c == nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	// A file that parsed is validated even when some values had the wrong
	// type (they were blanked), so every problem is reported at once.
	c.resolveDataDir(path)
	c.resolveSkillDirs(path)
	c.ApplyDefaults()
	if err := errors.Join(err, c.Validate()); err != nil {
		return c, fmt.Errorf("config %s:\n%w", path, err)
	}
	return c, nil
}

func parse(data []byte, env func(string) (string, bool)) (*Config, error) {
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
	tw := &typedWalk{expanded: x.expanded, bad: map[string]bool{}}
	tw.errs = canonicalToolKeys(doc)
	tw.walk(doc, reflect.TypeFor[Config](), "")
	errs := tw.errs
	if err := root.Decode(c); err != nil {
		errs = append(errs, err)
	}
	c.badKeys = tw.bad
	c.lines = lineIndex(doc)
	for name := range x.missing {
		c.missingEnv = append(c.missingEnv, name)
	}
	slices.Sort(c.missingEnv)
	c.unsetAt = x.unsetAt
	c.headerEnv = x.headerEnv
	return c, errors.Join(errs...)
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

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// typedWalk walks the node tree along the Go type it decodes into. It reports
// mapping keys that have no field, and turns expanded text back into a YAML
// value where the field is a number or a bool ("" = absent). Merge keys and
// aliases are skipped: their anchor is checked where it is defined.
type typedWalk struct {
	expanded map[*yaml.Node]bool
	errs     []error
	bad      map[string]bool // keys whose value had the wrong type
}

func (w *typedWalk) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && w.expanded[n] {
		switch t.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			n.Tag, n.Style = "", 0
			if n.Value == "" {
				n.Tag = "!!null"
			}
		}
	}
	if w.badType(n, t, path) {
		return
	}
	// A type that decodes itself is not walked, except the mapping form of a
	// struct that also has a scalar shorthand (APIKey): its keys are checked.
	if reflect.PointerTo(t).Implements(unmarshalerType) && (t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode) {
		return
	}
	switch {
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
