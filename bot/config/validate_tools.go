package config

import (
	"fmt"
	"html/template"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Validation of the tools block (HTTP tools, GitHub) and the MCP servers.

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

func (c *Config) validateTools(p *problems) {
	seen := map[string]bool{}
	for i, h := range c.Tools.HTTP {
		key := fmt.Sprintf("tools.http[%d]", i)
		switch {
		case h.Name == "":
			p.add(key+".name", "required")
		case !namePattern.MatchString(h.Name):
			p.add(key+".name", "%q: use letters, digits, _ and -", h.Name)
		case seen[h.Name]:
			p.add(key+".name", "duplicate tool name %q", h.Name)
		}
		seen[h.Name] = true
		if strings.TrimSpace(h.Description) == "" {
			p.add(key+".description", "required")
		}
		checkSchema(p, key+".input", h.Input)
		checkSchema(p, key+".output", h.Output)
		if !slices.Contains(httpMethods, h.Method) {
			p.add(key+".method", "must be one of %s, got %q", strings.Join(httpMethods, ", "), h.Method)
		}
		checkURL(p, key+".url", h.URL, true)
		atLeast(p, key+".timeout_ms", int64(h.TimeoutMS), 1, "")
		if a := h.Approval; a != nil {
			if a.Title == "" {
				p.add(key+".approval.title", "required")
			}
			checkTemplate(p, key+".approval.title", a.Title)
			for j, f := range a.Facts {
				fkey := fmt.Sprintf("%s.approval.facts[%d]", key, j)
				if f.Label == "" {
					p.add(fkey+".label", "required")
				}
				checkTemplate(p, fkey+".value", f.Value)
			}
		}
	}
	if w := c.Tools.WebSearch; w != nil {
		oneOf(p, "tools.web_search.provider", w.Provider, "tavily", "brave", "searxng", "ollama", "mojeek", "marginalia")
		checkURL(p, "tools.web_search.endpoint", w.Endpoint, false)
		atLeast(p, "tools.web_search.max_results", int64(w.MaxResults), 1, "")
		atLeast(p, "tools.web_search.timeout_ms", int64(w.TimeoutMS), 1, "")
	}
	if w := c.Tools.WebFetch; w != nil {
		atLeast(p, "tools.web_fetch.max_chars", int64(w.MaxChars), 1, "")
		atLeast(p, "tools.web_fetch.max_body", w.MaxBody, 1, "")
		atLeast(p, "tools.web_fetch.timeout_ms", int64(w.TimeoutMS), 1, "")
	}
	if s := c.Tools.SandboxExec; s != nil {
		validateSandbox(p, c, s)
	}
	if g := c.Tools.GitHub; g != nil {
		validateGitHub(p, g)
	}
	c.validateOAuthTools(p)
}

var (
	githubOwner = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
	githubName  = regexp.MustCompile(`^[A-Za-z0-9._*?\[\]^-]+$`)
)

// validateGitHub checks tools.github: exactly one credential, and an
// allow-list of owner/name entries whose owner is literal (a search can be
// confined to an owner, not to an owner pattern).
func validateGitHub(p *problems, g *GitHubConfig) {
	switch {
	case g.Token != "" && g.App != nil:
		p.add("tools.github.token", "set token or app, not both")
	case g.Token != "":
	case g.App == nil:
		if vars := p.unsetAt["tools.github.token"]; len(vars) > 0 {
			p.required("tools.github.token", "")
		} else {
			p.add("tools.github.token", "required (or set tools.github.app)")
		}
	default:
		atLeast(p, "tools.github.app.app_id", g.App.AppID, 1, "")
		atLeast(p, "tools.github.app.installation_id", g.App.InstallationID, 1, "")
		p.required("tools.github.app.private_key_file", g.App.PrivateKeyFile)
	}
	checkURL(p, "tools.github.base_url", g.BaseURL, false)
	checkURL(p, "tools.github.git_url", g.GitURL, false)
	validateGitHubActsAs(p, g)
	if len(g.Repos) == 0 {
		p.add("tools.github.repos", "list at least one repository (owner/name; the name may be a glob such as acme/*)")
	}
	for i, r := range g.Repos {
		key := fmt.Sprintf("tools.github.repos[%d]", i)
		owner, name, ok := strings.Cut(r, "/")
		switch {
		case !ok || !githubOwner.MatchString(owner) || !githubName.MatchString(name):
			p.add(key, "%q: want owner/name, the owner literal, the name letters, digits, . _ - or a glob", r)
		case !validGlob(name):
			p.add(key, "%q: invalid glob", r)
		}
	}
}

func validGlob(pattern string) bool {
	_, err := path.Match(pattern, "")
	return err == nil
}

func checkSchema(p *problems, key string, v JSONValue) {
	if len(v) > 0 && v[0] != '{' {
		p.add(key, "must be a JSON Schema object")
	}
}

func checkTemplate(p *problems, key, text string) {
	if _, err := template.New(key).Parse(text); err != nil {
		p.add(key, "invalid template: %v", err)
	}
}

func (c *Config) validateMCP(p *problems) {
	seen := map[string]bool{}
	for i, m := range c.MCPServers {
		key := fmt.Sprintf("mcp_servers[%d]", i)
		switch {
		case m.ID == "":
			p.add(key+".id", "required")
		case !namePattern.MatchString(m.ID) || strings.Contains(m.ID, "__"):
			p.add(key+".id", "%q: use letters, digits, _ and - (not __, the tool name separator)", m.ID)
		case seen[m.ID]:
			p.add(key+".id", "duplicate %q", m.ID)
		}
		seen[m.ID] = true
		switch m.Transport {
		case "stdio":
			p.required(key+".command", m.Command)
		case "http":
			checkURL(p, key+".url", m.URL, true)
		default:
			p.add(key+".transport", "must be stdio or http, got %q", m.Transport)
		}
		switch m.Protocol {
		case "", "2025-11-25", "2026-07-28":
		default:
			p.add(key+".protocol", "must be 2025-11-25 or 2026-07-28, got %q", m.Protocol)
		}
		c.validateMCPAuth(p, key, m)
		checkMCPApproval(p, key+".approval", m.Approval)
		for _, name := range slices.Sorted(maps.Keys(m.Tools)) {
			checkMCPApproval(p, fmt.Sprintf("%s.tools.%s.approval", key, name), m.Tools[name].Approval)
		}
	}
}

// validateMCPAuth checks auth: oauth and what goes with it.
func (c *Config) validateMCPAuth(p *problems, key string, m MCPServerConfig) {
	switch m.Auth {
	case "":
		if m.Per != "" || m.OAuth != nil {
			p.add(key+".auth", "per and oauth need auth: oauth")
		}
		if m.ActsAs != "" && m.ActsAs != "app" {
			p.add(key+".acts_as", "only a server with auth: oauth and per: person can act as a person (requester or approver); got %q", m.ActsAs)
		}
		return
	case "oauth":
	default:
		p.add(key+".auth", "must be oauth or empty, got %q", m.Auth)
		return
	}
	if m.Transport != "http" {
		p.add(key+".auth", "oauth needs an http server (a url)")
	}
	if m.BearerToken != "" {
		p.add(key+".bearer_token", "a server takes auth: oauth or a bearer token, not both")
	}
	if c.PublicURL == "" {
		p.add("public_url", "required by %s.auth: oauth (the OAuth redirect URI is public_url + /oauth/callback)", key)
	}
	switch m.Per {
	case "workspace":
		if m.ActsAs != "" && m.ActsAs != "app" {
			p.add(key+".acts_as", "a per: workspace server acts as the app (its one connection); requester and approver need per: person, got %q", m.ActsAs)
		}
	case "person":
		switch m.ActsAs {
		case "", "requester", "approver":
		case "app":
			p.add(key+".acts_as", "a per: person server has no connection of the app's own: use requester or approver")
		default:
			p.add(key+".acts_as", "must be requester or approver, got %q", m.ActsAs)
		}
	default:
		p.add(key+".per", "must be workspace or person, got %q", m.Per)
	}
	if m.OAuth != nil && m.OAuth.ClientID == "" {
		p.add(key+".oauth.client_id", "required when oauth is set")
	}
}

func checkMCPApproval(p *problems, key, mode string) {
	switch mode {
	case "", "always", "never", "annotations":
	default:
		p.add(key, "must be always, never or annotations, got %q", mode)
	}
}
