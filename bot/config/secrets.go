package config

import (
	"net/url"
	"slices"
	"strings"
)

// Secrets returns every non-empty secret value in the config, without
// duplicates, longest first so a scrubber replaces "abc123" before "abc":
// model api keys, api_keys, values substituted from the environment into
// tools.http headers, Slack and Linear tokens and secrets, MCP bearer tokens
// and env values, the console's Slack sign-in client secret, the web_search
// api key and the GitHub token.
func (c *Config) Secrets() []string {
	var s []string
	for _, m := range c.Models {
		s = append(s, m.APIKey)
	}
	for _, k := range c.APIKeys {
		s = append(s, k.Key)
	}
	s = append(s, c.headerEnv...)
	s = append(s, dsnPassword(c.Storage.DSN)...)
	if sl := c.Slack; sl != nil {
		s = append(s, sl.BotToken, sl.SigningSecret, sl.AppToken)
	}
	if l := c.Linear; l != nil {
		s = append(s, l.WebhookSecret, l.AccessToken, l.ClientSecret)
	}
	if g := c.GitHub; g != nil {
		s = append(s, g.WebhookSecret, g.Token)
	}
	for _, m := range c.MCPServers {
		s = append(s, m.BearerToken)
		if m.OAuth != nil {
			s = append(s, m.OAuth.ClientSecret)
		}
		for _, v := range m.Env {
			s = append(s, v)
		}
	}
	if w := c.Tools.WebSearch; w != nil {
		s = append(s, w.APIKey)
	}
	if sl := c.Console.SlackSignIn; sl != nil {
		s = append(s, sl.ClientSecret)
	}
	if g := c.Tools.GitHub; g != nil {
		s = append(s, g.Token)
	}
	s = slices.DeleteFunc(s, func(v string) bool { return v == "" })
	slices.SortFunc(s, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(s)
}

// dsnPassword returns the secrets of a PostgreSQL connection string: the
// whole string and its password, from a postgres:// URL's user info or a
// key=value string's password key.
func dsnPassword(dsn string) []string {
	if dsn == "" {
		return nil
	}
	out := []string{dsn}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
		return out
	}
	for rest := dsn; ; {
		i := strings.Index(rest, "password")
		if i < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[i+len("password"):], " ")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " ")
		end := strings.IndexByte(rest, ' ')
		if strings.HasPrefix(rest, "'") {
			rest = rest[1:]
			end = strings.IndexByte(rest, '\'')
		}
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			out = append(out, rest[:end])
		}
		rest = rest[end:]
	}
}
