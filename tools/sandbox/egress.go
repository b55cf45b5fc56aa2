package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"brain/internal/egress"
	"brain/internal/gitmirror"
)

// Egress is network mode "proxy": each command runs in its own network
// namespace (only loopback) and reaches the outside through the session's
// egress proxy (internal/egress), by way of a forwarder that listens on
// 127.0.0.1:3128 inside and relays to a Unix socket bound into the
// sandbox. It needs nothing beyond what the sandbox already needs (user
// and network namespaces, which bwrap creates unprivileged): no pasta, no
// slirp4netns, no root.
type Egress struct {
	// Allow is the host allow-list of agents without their own.
	Allow []string
	// AgentAllow replaces Allow for the agents it names.
	AgentAllow map[string][]string
	// PrivateOK lists host:port destinations allowed although they resolve
	// to private or loopback addresses.
	PrivateOK []string
	// Deny lists brain's own listeners: never reached, whatever the lists say.
	Deny []netip.AddrPort
	// GitHosts maps the host git names inside ("github.com") to where the
	// proxy fetches from ("https://github.com"); see egress.Policy.
	GitHosts map[string]string
	// Credentials brokers read tokens for git; nil gives none.
	Credentials egress.Credentials
	// Helper is brain's binary, bound read-only into the sandbox as the
	// forwarder and git credential helper; empty = os.Executable().
	Helper string
	// MirrorRoot, when set, holds each agent's repository cache
	// (MirrorRoot/AGENT): git fetches with a brokered token are served from
	// a mirror the proxy fetches up to date first. MirrorBytes bounds each
	// agent's (<= 0: no limit).
	MirrorRoot  string
	MirrorBytes int64

	mirrors *mirrorSet
}

// mirrorSet is the agents' repository caches, one per agent, shared by
// its sessions.
type mirrorSet struct {
	mu     sync.Mutex
	agents map[string]*gitmirror.Mirrors
}

// mirrorsOf is agent's repository cache, nil without MirrorRoot.
func (e *Egress) mirrorsOf(agent string) *gitmirror.Mirrors {
	if e.MirrorRoot == "" || e.mirrors == nil {
		return nil
	}
	e.mirrors.mu.Lock()
	defer e.mirrors.mu.Unlock()
	m, ok := e.mirrors.agents[agent]
	if !ok {
		m = &gitmirror.Mirrors{Root: filepath.Join(e.MirrorRoot, dirName(agent)), MaxBytes: e.MirrorBytes}
		e.mirrors.agents[agent] = m
	}
	return m
}

// policy is the egress policy of agent's sessions.
func (e *Egress) policy(agent string) egress.Policy {
	allow := e.Allow
	if a, ok := e.AgentAllow[agent]; ok {
		allow = a
	}
	return egress.Policy{Allow: allow, PrivateOK: e.PrivateOK, Deny: e.Deny, GitHosts: e.GitHosts, Credentials: e.Credentials,
		Mirrors: e.mirrorsOf(agent)}
}

// checkEgress fills defaults and checks e; the error names what is wrong.
func checkEgress(e *Egress) error {
	e.mirrors = &mirrorSet{agents: map[string]*gitmirror.Mirrors{}}
	if e.Helper == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("sandbox: egress: cannot find brain's own binary for the in-sandbox helper: %w", err)
		}
		e.Helper = exe
	}
	fi, err := os.Stat(e.Helper)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o001 == 0 {
		return fmt.Errorf("sandbox: egress: the helper %s must be a file every user may execute (the sandbox user runs it)", e.Helper)
	}
	if err := e.policy("").Check(); err != nil {
		return fmt.Errorf("sandbox: egress: %w", err)
	}
	for agent, a := range e.AgentAllow {
		if err := (egress.Policy{Allow: a}).Check(); err != nil {
			return fmt.Errorf("sandbox: egress: agent %s: %w", agent, err)
		}
	}
	return nil
}

// gitConfig is /etc/gitconfig in proxy mode: git goes through the proxy,
// asks brain's helper for credentials (per repository path), and speaks
// plain HTTP to the proxy for git hosts, which fetches them over TLS.
func gitConfig(e *Egress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[http]\n\tproxy = %s\n", proxyURL)
	fmt.Fprintf(&b, "[credential]\n\thelper = %s %s\n\tuseHttpPath = true\n", helperPath, helperArgs)
	hosts := make([]string, 0, len(e.GitHosts))
	for h := range e.GitHosts {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		fmt.Fprintf(&b, "[url \"http://%s/\"]\n\tinsteadOf = https://%s/\n", h, h)
	}
	return b.String()
}

// proxyEnv is added to a command's environment in proxy mode.
var proxyEnv = [][2]string{
	{"http_proxy", proxyURL}, {"https_proxy", proxyURL},
	{"HTTP_PROXY", proxyURL}, {"HTTPS_PROXY", proxyURL},
	{"GIT_TERMINAL_PROMPT", "0"},
}

// listen opens the session's proxy socket under dir: a socket only the
// sandbox user (and brain) may use, in a directory only brain may open.
func listenProxy(dir, sessionID string) (net.Listener, string, error) {
	path := filepath.Join(dir, dirHash(sessionID)+".sock")
	_ = os.Remove(path) // a socket left by a crash
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, "", err
	}
	// The sandbox user must be able to connect (it may be nobody); the
	// directory keeps every other host user out.
	if err := os.Chmod(path, 0o666); err != nil {
		l.Close()
		return nil, "", err
	}
	return l, path, nil
}

// egressNote says what a command's egress did, for the result and for
// errors; empty when nothing was refused for the first time.
func egressNote(r *egress.Report) string {
	if r == nil || len(r.NewRefusals) == 0 {
		return ""
	}
	var parts []string
	for _, f := range r.NewRefusals {
		parts = append(parts, f.Reason)
	}
	return "the egress proxy refused: " + strings.Join(parts, "; ")
}

// egressText describes proxy mode in the tool's description.
func egressText(e *Egress) string {
	var git []string
	for h := range e.GitHosts {
		git = append(git, h)
	}
	sort.Strings(git)
	t := "The network goes through brain's egress proxy (http_proxy is set): only hosts on this agent's allow-list are reached, never private addresses; " +
		"each result counts what was allowed and refused and names each newly refused host."
	if len(git) > 0 {
		t += " git clone and fetch of https://" + strings.Join(git, "/..., https://") + "/... work (credentials come from brain for allow-listed repositories); git push is refused: publish with the propose-change tool."
	}
	return t
}

// socketDir makes the directory of the proxies' sockets: short (a socket
// path is at most 107 bytes) and private to brain.
func socketDir() (string, error) {
	dir, err := os.MkdirTemp("", "brain-egress-")
	if err != nil {
		return "", fmt.Errorf("sandbox: egress: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: egress: %w", err)
	}
	return dir, nil
}

// dirHash names a session's socket: short, and distinct per session id.
func dirHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// startProxy starts the session's proxy on its socket.
func (s *Sandboxes) startProxy(b *box, sessionID, agent string) error {
	l, path, err := listenProxy(s.sockDir, sessionID)
	if err != nil {
		return err
	}
	b.proxy = egress.New(s.cfg.Egress.policy(agent), sessionID, agent, nil)
	b.sock = path
	go func() { _ = b.proxy.Serve(l) }()
	return nil
}

// closeProxies ends every session's proxy; s.mu is held.
func (s *Sandboxes) closeProxies() {
	for _, b := range s.boxes {
		if b.proxy != nil {
			b.proxy.Close()
		}
	}
	if s.sockDir != "" {
		os.RemoveAll(s.sockDir)
	}
}

// report is the session's egress counts, nil outside proxy mode.
func (b *box) report() *egress.Report {
	if b.proxy == nil {
		return nil
	}
	r := b.proxy.Report()
	return &r
}

// probeEgress prepares proxy mode (the sockets' directory, /etc/gitconfig)
// and runs a command through the forwarder, so a host where the helper
// cannot run fails at start-up, not at the first command.
func (s *Sandboxes) probeEgress() error {
	dir, err := socketDir()
	if err != nil {
		return err
	}
	s.sockDir = dir
	if err := os.WriteFile(filepath.Join(s.etcDir, "gitconfig"), []byte(gitConfig(s.cfg.Egress)), 0o644); err != nil {
		return fmt.Errorf("sandbox: egress: write gitconfig: %w", err)
	}
	ws, err := os.MkdirTemp(s.cfg.Root, ".probe-")
	if err != nil {
		return fmt.Errorf("sandbox: egress: probe: %w", err)
	}
	defer os.RemoveAll(ws)
	if err := s.makeWorkspace(filepath.Join(ws, "workspace")); err != nil {
		return fmt.Errorf("sandbox: egress: probe: %w", err)
	}
	l, sock, err := listenProxy(dir, ".probe")
	if err != nil {
		return fmt.Errorf("sandbox: egress: probe: %w", err)
	}
	p := egress.New(egress.Policy{}, "", "", nil)
	go func() { _ = p.Serve(l) }()
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.tryRun(ctx, s.feat, s.etcDir, filepath.Join(ws, "workspace"), sock); err != nil {
		return fmt.Errorf("sandbox: network mode proxy does not work here (it needs a network namespace from bwrap, "+
			"the helper %s runnable by the sandbox user, and a loopback interface in the namespace): %w", s.cfg.Egress.Helper, err)
	}
	return nil
}
