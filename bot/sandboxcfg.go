package bot

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"brain/bot/config"
	"brain/tools/github"
	"brain/tools/sandbox"
)

// sandboxConfig converts tools.sandbox_exec; in network mode proxy it
// wires the egress policy, brain's listeners as destinations never
// reached, and the GitHub tools' credentials as git's brokered tokens.
func sandboxConfig(cfg *config.Config) (sandbox.Config, error) {
	sc := cfg.Tools.SandboxExec
	out := sandbox.Config{
		Root:              filepath.Join(cfg.DataDir, "sandboxes"),
		Network:           sc.Network == config.NetworkHost,
		DefaultTimeout:    time.Duration(sc.TimeoutSeconds) * time.Second,
		MaxOutputBytes:    cfg.Limits.MaxOutputBytes,
		RunAs:             sc.RunAs,
		MaxProcesses:      sc.MaxProcesses,
		MaxMemoryBytes:    sc.MaxMemoryBytes,
		MaxCPUSeconds:     sc.MaxCPUSeconds,
		MaxFileBytes:      sc.MaxFileBytes,
		MaxWorkspaceBytes: sc.MaxWorkspaceBytes,
	}
	if sc.ModuleCacheBytes > 0 {
		out.ModCacheRoot, out.ModCacheBytes = filepath.Join(cfg.DataDir, "cache", "gomod"), sc.ModuleCacheBytes
	}
	if sc.Network != config.NetworkProxy {
		return out, nil
	}
	e := &sandbox.Egress{GitHosts: map[string]string{}}
	if p := sc.Egress; p != nil {
		e.Allow, e.AgentAllow, e.PrivateOK = p.Allow, p.Agents, p.PrivateOK
		if p.GitCacheBytes > 0 {
			e.MirrorRoot, e.MirrorBytes = filepath.Join(cfg.DataDir, "cache", "git"), p.GitCacheBytes
		}
		for h, base := range p.GitHosts {
			e.GitHosts[h] = base
		}
	}
	deny, err := listenerAddrs(cfg.Listen)
	if err != nil {
		return out, fmt.Errorf("listen: %w", err)
	}
	e.Deny = deny
	if g := cfg.Tools.GitHub; g != nil {
		ghc, err := githubConfig(cfg)
		if err != nil {
			return out, err
		}
		tokens, err := github.NewRepoTokens(ghc)
		if err != nil {
			return out, fmt.Errorf("tools.github: %w", err)
		}
		e.Credentials = tokens
		if len(e.GitHosts) == 0 {
			e.GitHosts["github.com"] = "https://github.com"
		}
	}
	out.Egress = e
	return out, nil
}

// githubConfig converts tools.github.
func githubConfig(cfg *config.Config) (github.Config, error) {
	g := cfg.Tools.GitHub
	ghc := github.Config{Token: g.Token, BaseURL: g.BaseURL, GitURL: g.GitURL, Repos: g.Repos, MaxOutputBytes: cfg.Limits.MaxOutputBytes,
		ActsAs: g.ActsAs}
	if cfg.Tools.SandboxExec != nil {
		// github_propose_change reads the commits the agent made there.
		root := filepath.Join(cfg.DataDir, "sandboxes")
		ghc.Workspace = func(sessionID string) string { return sandbox.WorkspaceDir(root, sessionID) }
	}
	if a := g.App; a != nil {
		key, err := os.ReadFile(a.PrivateKeyFile)
		if err != nil {
			return ghc, fmt.Errorf("tools.github.app.private_key_file: %w", err)
		}
		ghc.App = &github.App{AppID: a.AppID, InstallationID: a.InstallationID, PrivateKey: key}
	}
	return ghc, nil
}

// listenerAddrs are the addresses brain's API listens on: an unspecified
// host stands for every address on that port; a name, for what it
// resolves to now.
func listenerAddrs(listen string) ([]netip.AddrPort, error) {
	host, ps, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", ps, err)
	}
	if host == "" {
		return []netip.AddrPort{netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(port)), netip.AddrPortFrom(netip.IPv6Unspecified(), uint16(port))}, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.AddrPort{netip.AddrPortFrom(a, uint16(port))}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var out []netip.AddrPort
	for _, a := range addrs {
		out = append(out, netip.AddrPortFrom(a, uint16(port)))
	}
	return out, nil
}

// SandboxHelperCommand is the first argument with which brain's binary runs
// as the helper inside a sandbox (the egress forwarder and git's credential
// helper) instead of as brain.
const SandboxHelperCommand = sandbox.HelperCommand

// SandboxHelper runs the in-sandbox helper and returns its exit code.
func SandboxHelper(args []string) int { return sandbox.HelperMain(args) }
