package config

import (
	"encoding/json"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written in YAML as a Go duration string ("120s").
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML parses a Go duration string; an empty value leaves the default.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration like 120s", n.Line)
	}
	if n.Value == "" || n.ShortTag() == "!!null" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration like 120s", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes d as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// JSONValue is any YAML value kept as JSON text, such as a tool's input schema
// written in YAML. Mapping keys keep their order. Empty = the key was absent.
type JSONValue []byte

// UnmarshalYAML converts the node to JSON.
func (v *JSONValue) UnmarshalYAML(n *yaml.Node) error {
	b, err := appendJSON(nil, n)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*v = b
	return nil
}

// MarshalJSON returns the JSON text, or null when empty.
func (v JSONValue) MarshalJSON() ([]byte, error) {
	if len(v) == 0 {
		return []byte("null"), nil
	}
	return v, nil
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
