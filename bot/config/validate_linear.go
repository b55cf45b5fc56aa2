package config

import (
	"strings"
	"unicode"
)

// checkStateName checks a Linear workflow state's name or id as written
// in the config: a state's name is one line of text, matched in the
// issue's team (case-insensitively) when the state is used.
func checkStateName(p *problems, key, v string) {
	switch {
	case v == "":
	case strings.TrimSpace(v) != v:
		p.add(key, "%q has spaces around it", v)
	case len(v) > 256 || strings.ContainsFunc(v, unicode.IsControl):
		p.add(key, "is not a workflow state's name or id (one line, at most 256 bytes)")
	}
}
