// Package egress is the proxy a sandbox in network mode "proxy" reaches the
// outside through: the sandbox has its own network namespace with nothing
// but loopback, and one Unix socket bound into it leads here.
//
// A Proxy serves one session. It allows a destination only when its host
// matches the agent's allow-list, resolves it once, refuses it when any
// address is loopback, private, link-local or otherwise not the public
// internet (netguard; an exact host:port may be let through with
// Policy.PrivateOK), never dials one of brain's own listeners, and dials
// the address it checked. TLS passes through CONNECT untouched (no
// interception). Git hosts are the exception: git inside the sandbox
// speaks plain HTTP to the proxy for them (the sandbox's git config
// rewrites their https URLs), so the proxy can see each request, refuse
// every push (git-receive-pack) and every path that is not a fetch, and
// swap a credential grant for a real read token on the way out over TLS.
//
// Credentials never enter the sandbox: git's credential helper asks the
// proxy for a repository and gets a grant, an opaque random string bound to
// this session and that repository; only the proxy knows the token it
// stands for. Repositories outside Credentials' allow-list get no grant.
//
// Every decision is counted; the first refusal of each host is kept with
// its reason so the sandbox's tool result can name it.
//
// It imports only the standard library and brain/internal/netguard.
package egress

import (
	"brain/internal/gitmirror"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"brain/internal/netguard"
)

// Policy is what one session's proxy allows.
type Policy struct {
	// Allow lists host patterns: "github.com" (that host), "*.npmjs.org"
	// (any subdomain, not the domain itself), optionally with a port
	// ("example.com:8443"); without a port only 80 and 443 are allowed.
	Allow []string
	// PrivateOK lists exact host:port destinations that may resolve to
	// private or loopback addresses (an internal git server). Brain's own
	// listeners stay refused even then.
	PrivateOK []string
	// Deny lists brain's own listeners, never dialled. An unspecified
	// address (0.0.0.0:8080) denies that port on every non-public address.
	Deny []netip.AddrPort
	// GitHosts maps the host git uses inside the sandbox ("github.com") to
	// the base URL the proxy fetches from ("https://github.com"). Their
	// traffic goes through the git path, never through CONNECT.
	GitHosts map[string]string
	// Credentials brokers read tokens for git; nil gives none.
	Credentials Credentials
	// Mirrors, when set, is the agent's repository cache: git fetches of
	// repositories with a read token are served from a mirror brought up
	// to date from the git host first (internal/gitmirror).
	Mirrors *gitmirror.Mirrors

	// Lookup and Dial replace the resolver and dialer (tests).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial   func(ctx context.Context, network, address string) (net.Conn, error)
}

// TokenRequest asks for a read token for one repository.
type TokenRequest struct {
	Repo      string // owner/name as the sandbox wrote it
	SessionID string
	Agent     string
}

// Credentials gives short-lived read tokens for repositories. It is the
// seam a person's connection will implement too; today the GitHub tools'
// App or token does.
type Credentials interface {
	// AllowedRepo reports whether repo (owner/name) may get a token.
	AllowedRepo(repo string) bool
	// ReadToken returns a token that can read repo and, where the source
	// can scope tokens, nothing else.
	ReadToken(ctx context.Context, req TokenRequest) (string, error)
}

// Check reports the first problem of p, naming the field.
func (p Policy) Check() error {
	for _, a := range p.Allow {
		if _, _, err := parsePattern(a); err != nil {
			return fmt.Errorf("allow %q: %w", a, err)
		}
	}
	for _, a := range p.PrivateOK {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("private_ok %q: want host:port", a)
		}
	}
	for h, base := range p.GitHosts {
		if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
			return fmt.Errorf("git host %s: base %q is not an http(s) URL", h, base)
		}
	}
	return nil
}

// parsePattern splits "host[:port]" into a lower-case host pattern and a
// port (0 = 80 and 443).
func parsePattern(p string) (string, int, error) {
	host, port := p, 0
	if h, ps, err := net.SplitHostPort(p); err == nil {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535", ps)
		}
		host, port = h, n
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	rest, wild := strings.CutPrefix(host, "*.")
	switch {
	case host == "":
		return "", 0, errors.New("empty host")
	case strings.ContainsAny(rest, "*/ @"):
		return "", 0, fmt.Errorf("a pattern is a host name, optionally starting with \"*.\"")
	case wild && !strings.Contains(rest, "."):
		return "", 0, fmt.Errorf("*.%s would match a whole top-level domain", rest)
	}
	return host, port, nil
}

// allowed reports whether host:port matches the allow-list.
func (p Policy) allowed(host string, port int) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, a := range p.Allow {
		pat, pp, err := parsePattern(a)
		if err != nil {
			continue
		}
		if pp == 0 && port != 80 && port != 443 || pp != 0 && pp != port {
			continue
		}
		if rest, ok := strings.CutPrefix(pat, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
		} else if host == pat {
			return true
		}
	}
	return false
}

// refusal is a destination the proxy would not reach, with why.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

func refuse(format string, args ...any) error { return &refusal{reason: fmt.Sprintf(format, args...)} }

// dial resolves host once, checks every address and dials a checked one.
func (p Policy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	if err := netguard.CheckHost(host, false); err != nil {
		// A literal of a blocked class may still be a PrivateOK entry.
		var be *netguard.BlockedError
		if !asBlocked(err, &be) || !be.Addr.IsValid() || !p.privateOK(host, port) {
			return nil, refuse("%v", err)
		}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lookup := p.Lookup
		if lookup == nil {
			lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		if addrs, err = lookup(ctx, host); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: %w", host, netguard.ErrNoAddress)
		}
	}
	for _, a := range addrs {
		if err := p.checkAddr(host, port, a); err != nil {
			return nil, err
		}
	}
	dial := p.Dial
	if dial == nil {
		d := &net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refuse("cannot check the address %q before connecting", address)
			}
			return p.checkAddr(host, port, ap.Addr())
		}}
		dial = d.DialContext
	}
	var firstErr error
	for _, a := range addrs {
		c, err := dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// checkAddr refuses brain's own listeners always, and non-public
// addresses unless host:port is PrivateOK.
func (p Policy) checkAddr(host string, port int, a netip.Addr) error {
	a = a.WithZone("").Unmap()
	class := netguard.Classify(a)
	for _, d := range p.Deny {
		if int(d.Port()) != port {
			continue
		}
		if d.Addr().Unmap() == a || d.Addr().IsUnspecified() && class != "" {
			return refuse("%s resolves to %s, one of brain's own listeners", host, netip.AddrPortFrom(a, uint16(port)))
		}
	}
	if class != "" && !p.privateOK(host, port) {
		if host == a.String() {
			return refuse("%s is %s address", a, article(class))
		}
		return refuse("%s resolves to %s, %s address", host, a, article(class))
	}
	return nil
}

func (p Policy) privateOK(host string, port int) bool {
	hp := net.JoinHostPort(strings.ToLower(host), strconv.Itoa(port))
	for _, e := range p.PrivateOK {
		if strings.EqualFold(e, hp) {
			return true
		}
	}
	return false
}

func asBlocked(err error, be **netguard.BlockedError) bool {
	b, ok := err.(*netguard.BlockedError)
	if ok {
		*be = b
	}
	return ok
}

func article(class string) string {
	if strings.IndexByte("aeiouAEIOU", class[0]) >= 0 {
		return "an " + class
	}
	return "a " + class
}
