package config

import (
	"fmt"
	"net"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sandbox network modes (tools.sandbox_exec.network).
const (
	NetworkNone  = "none"  // only the sandbox's own loopback (default)
	NetworkHost  = "host"  // the host's network, loopback included
	NetworkProxy = "proxy" // own namespace; out only through brain's egress proxy
)

// SandboxNetwork is tools.sandbox_exec.network: none, host or proxy. The
// booleans of older configs read as host (true) and none (false).
type SandboxNetwork string

// UnmarshalYAML reads a mode name or a boolean.
func (n *SandboxNetwork) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: network is none, host or proxy", v.Line)
	}
	switch v.Tag {
	case "!!bool":
		var b bool
		if err := v.Decode(&b); err != nil {
			return err
		}
		*n = NetworkNone
		if b {
			*n = NetworkHost
		}
		return nil
	}
	*n = SandboxNetwork(strings.TrimSpace(v.Value))
	return nil
}

// SandboxEgressConfig is the policy of network mode proxy.
type SandboxEgressConfig struct {
	// Allow lists host patterns every agent may reach: "proxy.golang.org",
	// "*.npmjs.org", "example.com:8443" (without a port: 80 and 443).
	Allow []string `yaml:"allow"`
	// Agents replaces Allow for the agents it names.
	Agents map[string][]string `yaml:"agents"`
	// PrivateOK lists exact host:port destinations allowed although they
	// resolve to private or loopback addresses (an internal git server).
	PrivateOK []string `yaml:"private_ok"`
	// GitHosts maps a git host as written in clone URLs to where brain
	// fetches it; default github.com -> https://github.com when
	// tools.github is set.
	GitHosts map[string]string `yaml:"git_hosts"`
	// GitCacheBytes, when above 0, turns on each agent's repository cache
	// (data_dir/cache/git/AGENT) and bounds its size; 0 = no cache.
	GitCacheBytes int64 `yaml:"git_cache_bytes"`
}

func validateSandbox(p *problems, c *Config, s *SandboxExecConfig) {
	if s.TimeoutSeconds < 1 || s.TimeoutSeconds > maxSandboxTimeout {
		p.add("tools.sandbox_exec.timeout_seconds", "must be between 1 and %d", maxSandboxTimeout)
	}
	oneOf(p, "tools.sandbox_exec.network", string(s.Network), NetworkNone, NetworkHost, NetworkProxy)
	if s.ModuleCacheBytes < 0 {
		p.add("tools.sandbox_exec.module_cache_bytes", "must be >= 0 (0 = no module cache)")
	}
	e := s.Egress
	if e == nil {
		return
	}
	if s.Network != NetworkProxy {
		p.add("tools.sandbox_exec.egress", "applies to network: proxy only")
	}
	for i, a := range e.Allow {
		checkHostPattern(p, fmt.Sprintf("tools.sandbox_exec.egress.allow[%d]", i), a)
	}
	for agent, list := range e.Agents {
		key := "tools.sandbox_exec.egress.agents." + agent
		if !c.hasAgent(agent) {
			p.add(key, "names no agent")
		}
		for i, a := range list {
			checkHostPattern(p, fmt.Sprintf("%s[%d]", key, i), a)
		}
	}
	for i, a := range e.PrivateOK {
		if _, _, err := net.SplitHostPort(a); err != nil {
			p.add(fmt.Sprintf("tools.sandbox_exec.egress.private_ok[%d]", i), "%q is not host:port", a)
		}
	}
	for host, base := range e.GitHosts {
		checkURL(p, "tools.sandbox_exec.egress.git_hosts."+host, base, true)
	}
	if e.GitCacheBytes < 0 {
		p.add("tools.sandbox_exec.egress.git_cache_bytes", "must be >= 0 (0 = no repository cache)")
	}
}

// checkHostPattern accepts a host name, optionally with a leading "*." and
// a ":port".
func checkHostPattern(p *problems, key, pat string) {
	host := pat
	if h, _, err := net.SplitHostPort(pat); err == nil {
		host = h
	}
	rest, wild := strings.CutPrefix(host, "*.")
	switch {
	case rest == "" || strings.ContainsAny(rest, "*/ @"):
		p.add(key, "%q is not a host name (optionally *.domain and :port)", pat)
	case wild && !strings.Contains(rest, "."):
		p.add(key, "%q would match a whole top-level domain", pat)
	}
}

func (c *Config) hasAgent(name string) bool {
	for _, a := range c.Agents {
		if a.Name == name {
			return true
		}
	}
	return false
}
