// Package web is the web tool family: web_search (one of several search
// providers behind one result shape) and web_fetch (one URL's readable
// text, hardened against server-side request forgery because the URL comes
// from the model).
//
// Failures are tools.Error values the model reads; a misconfigured
// provider is a tool error at call time, not a crash. API keys never appear
// in errors or results.
//
// It imports only the standard library and brain/tools.
package web

import (
	"regexp"
	"strings"
)

// versioned matches a built-in tool type with a trailing date version, as
// Anthropic sends them: web_search_20250305.
var versioned = regexp.MustCompile(`^(.+)_[0-9]{8}$`)

// CanonicalType normalises a built-in tool type to the key it is configured
// under: web_search_20250305 -> web_search, web_fetch_20250910 -> web_fetch.
// Other names are returned trimmed and otherwise unchanged.
func CanonicalType(name string) string {
	name = strings.TrimSpace(name)
	if m := versioned.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}
