package config

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// APIKey is one entry of api_keys: a bearer key for /v1 and /metrics and
// the name its holder acts under. An entry is either a mapping
// ({name: ops, key: ..., act_for: false}) or, the plain form, the key alone;
// ApplyDefaults names a key without a name DefaultAPIKeyName(index).
type APIKey struct {
	Name string `yaml:"name"` // recorded as the decider of approvals made with this key
	Key  string `yaml:"key"`
	// ActFor lets the holder decide approvals in someone else's name: the
	// "by" of a decision may name anyone. Without it "by" must be Name.
	ActFor bool `yaml:"act_for"`
}

// UnmarshalYAML reads the mapping form or the plain form (a bare key).
func (k *APIKey) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*k = APIKey{}
		if n.ShortTag() != "!!null" {
			k.Key = n.Value
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: an api key is a string or a mapping {name, key, act_for}", n.Line)
	}
	type fields APIKey // without this method, so Decode reads the mapping
	return n.Decode((*fields)(k))
}

// apiKeyName is what a key's name may be: it is written into approval
// records and compared with approvers lists.
var apiKeyName = regexp.MustCompile(`^[A-Za-z0-9_.@-]+$`)

func (c *Config) validateAPIKeys(p *problems) {
	names := map[string]int{}
	keys := map[string]int{}
	for i, k := range c.APIKeys {
		path := fmt.Sprintf("api_keys[%d]", i)
		switch j, dup := names[k.Name]; {
		case k.Name == "":
			p.add(path+".name", "required")
		case !apiKeyName.MatchString(k.Name):
			p.add(path+".name", "%q: use letters, digits and _ . @ -", k.Name)
		case dup:
			p.add(path+".name", "duplicate %q (also api_keys[%d])", k.Name, j)
		default:
			names[k.Name] = i
		}
		if k.Key == "" {
			// The plain form's variable was expanded at api_keys[i] itself.
			vars := append(p.unsetAt[path], p.unsetAt[path+".key"]...)
			if len(vars) > 0 {
				p.add(path+".key", "required, but the environment variable %s is not set", strings.Join(vars, ", "))
			} else {
				p.add(path+".key", "required")
			}
			continue
		}
		if j, dup := keys[k.Key]; dup {
			p.add(path+".key", "the same key as api_keys[%d]; each key names one caller", j)
			continue
		}
		keys[k.Key] = i
	}
}
