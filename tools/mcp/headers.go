package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// headerProblem says why a tool's input schema carries an invalid
// x-mcp-header annotation (SEP-2243), or "" when every one is valid. A
// client must not offer such a tool: the header it would send is
// ill-formed or ambiguous. The annotation may stand only on a top-level
// property of type string, integer or boolean; its value is a non-empty
// HTTP token, unique among the tool's properties ignoring case.
func headerProblem(schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	seen := map[string]string{}
	for _, prop := range sortedKeys(s.Properties) {
		var p struct {
			Type   any     `json:"type"`
			Header *string `json:"x-mcp-header"`
		}
		if json.Unmarshal(s.Properties[prop], &p) != nil || p.Header == nil {
			continue
		}
		h := *p.Header
		switch typ, _ := p.Type.(string); {
		case h == "":
			return fmt.Sprintf("property %q: x-mcp-header is empty", prop)
		case !isToken(h):
			return fmt.Sprintf("property %q: x-mcp-header %q is not an HTTP header name", prop, h)
		case typ != "string" && typ != "integer" && typ != "boolean":
			return fmt.Sprintf("property %q: x-mcp-header on a %v, not a string, integer or boolean", prop, p.Type)
		}
		if other, dup := seen[strings.ToLower(h)]; dup {
			return fmt.Sprintf("properties %q and %q: the same x-mcp-header %q", other, prop, h)
		}
		seen[strings.ToLower(h)] = prop
	}
	return ""
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

func sortedKeys(m map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(m))
}
