package config

import (
	"slices"
	"strings"
)

// EnvUse is an unset environment variable and the keys whose values name it.
type EnvUse struct {
	Var  string
	Keys []string // sorted, e.g. models.default.api_key
}

// String is "VAR (used by key, key)".
func (u EnvUse) String() string { return u.Var + " (used by " + strings.Join(u.Keys, ", ") + ")" }

// MissingEnvUses is MissingEnv with the keys that use each variable, so a
// warning can say what will not work.
func (c *Config) MissingEnvUses() []EnvUse {
	byVar := map[string][]string{}
	for key, vars := range c.unsetAt {
		for _, v := range vars {
			byVar[v] = append(byVar[v], key)
		}
	}
	out := make([]EnvUse, 0, len(byVar))
	for _, v := range c.missingEnv {
		keys := byVar[v]
		slices.Sort(keys)
		out = append(out, EnvUse{Var: v, Keys: keys})
	}
	return out
}
