package mcp

import (
	"net/url"
	"strings"

	"brain/tools"
)

// publicEnv are environment variables whose values are not secrets and are
// left in results (a PATH shows up in many outputs). Every other configured
// env value is treated as a secret.
var publicEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TMPDIR": true, "TERM": true,
	"PWD": true, "NODE_ENV": true,
}

// secretsOf lists the values of cfg that must never reach results, errors
// or logs: the bearer token, env values (but publicEnv and LC_*), and the
// URL's password and query values.
func secretsOf(cfg ServerConfig) []string {
	out := []string{cfg.BearerToken}
	for k, v := range cfg.Env {
		if !publicEnv[k] && !strings.HasPrefix(k, "LC_") {
			out = append(out, v)
		}
	}
	if u, err := url.Parse(cfg.URL); err == nil {
		out = append(out, tools.URLSecrets(u)...)
	}
	return out
}
