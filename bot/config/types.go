package config

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

var durationType = reflect.TypeFor[Duration]()

// badType reports a value whose YAML shape or scalar type cannot decode
// into t, with its key and line (`limits.max_running_turns (line 4): want
// an integer, got "many"`), and blanks it, so the rest of the file still
// decodes and is validated: one wrong value never hides other problems.
// Types that decode themselves are left to their UnmarshalYAML, except
// Duration.
func (w *typedWalk) badType(n *yaml.Node, t reflect.Type, path string) bool {
	if n.Kind == yaml.AliasNode || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return false
	}
	want := ""
	switch {
	case t == durationType:
		if n.Kind != yaml.ScalarNode || n.Decode(new(Duration)) != nil {
			want = "a duration like 120s"
		}
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return false
	default:
		want = wantOf(t)
		if want == "" || shapeOK(n, t) && (n.Kind != yaml.ScalarNode || n.Decode(reflect.New(t).Interface()) == nil) {
			return false
		}
	}
	if want == "" {
		return false
	}
	w.errs = append(w.errs, fmt.Errorf("%s (line %d): want %s, got %s", path, n.Line, want, describeNode(n)))
	w.bad[path] = true
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
	return true
}

// wantOf names what a value of type t is written as.
func wantOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return ""
}

// shapeOK reports whether the node's kind fits t's kind.
func shapeOK(n *yaml.Node, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice:
		return n.Kind == yaml.SequenceNode
	case reflect.Map, reflect.Struct:
		return n.Kind == yaml.MappingNode
	}
	return n.Kind == yaml.ScalarNode
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

// underBad reports whether key is, or is under, a key whose value had the
// wrong type: Validate stays quiet about it, its type error says it all.
func underBad(bad map[string]bool, key string) bool {
	for k := range bad {
		if key == k || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[") {
			return true
		}
	}
	return false
}
