package config

import (
	"fmt"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Line returns the line of key's value in the file (e.g.
// "agents[0].tools[2]"), or 0 when the key was not written.
func (c *Config) Line(key string) int { return c.lines[key] }

// lineIndex maps every key path under doc (and every list item) to the
// line its value starts on.
func lineIndex(doc *yaml.Node) map[string]int {
	lines := map[string]int{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if path != "" {
			lines[path] = n.Line
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i]; k.ShortTag() != "!!merge" {
					walk(n.Content[i+1], joinKey(path, k.Value))
				}
			}
		case yaml.SequenceNode:
			for i, item := range n.Content {
				walk(item, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(doc, "")
	return lines
}

// resolveDataDir makes a relative data_dir (the default ./data included)
// relative to the directory of the config file at path, so brain finds the
// same database whatever directory it is started from.
func (c *Config) resolveDataDir(path string) {
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if !filepath.IsAbs(c.DataDir) {
		c.DataDir = filepath.Join(filepath.Dir(path), c.DataDir)
	}
}
