package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"brain/internal/netguard"
)

// The address rules are shared with the sandbox's egress proxy.
type blockedError = netguard.BlockedError

var errNoAddress = netguard.ErrNoAddress

func classify(a netip.Addr) string                   { return netguard.Classify(a) }
func checkHost(host string, allowPrivate bool) error { return netguard.CheckHost(host, allowPrivate) }
func numericHost(host string) bool                   { return netguard.NumericHost(host) }
func legacyIPv4(host string) (netip.Addr, bool)      { return netguard.LegacyIPv4(host) }

// checkURL refuses, before anything is sent, a URL web_fetch must not
// request: a scheme other than http(s), credentials, a missing host, an IP
// literal of a blocked class (unless allowPrivate), and any numeric host not
// in canonical form. Host names are not resolved here: they are checked at
// dial time, on the address actually dialled.
func checkURL(u *url.URL, allowPrivate bool) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return errors.New("the URL has no scheme; use http:// or https://")
	default:
		return fmt.Errorf("unsupported scheme %q: only http and https URLs can be fetched", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return errors.New("the URL has no host")
	}
	if u.User != nil {
		return errors.New("URLs with credentials (user:password@) are not fetched")
	}
	return checkHost(u.Hostname(), allowPrivate)
}

// guard is the only way web_fetch connects: it resolves the host once,
// refuses it if any of its addresses is blocked, and dials the checked IP
// itself, so no second resolution can hand the socket another address
// (DNS rebinding). The default dialer re-checks in Control, on the address
// the socket is about to connect to.
type guard struct {
	allowPrivate bool
	lookup       func(ctx context.Context, host string) ([]netip.Addr, error)
	dial         func(ctx context.Context, network, address string) (net.Conn, error)
}

func newGuard(cfg FetchConfig) *guard {
	g := &guard{allowPrivate: cfg.AllowPrivate, lookup: cfg.LookupIP, dial: cfg.DialContext}
	if g.lookup == nil {
		g.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if g.dial == nil {
		d := &net.Dialer{Control: g.control}
		g.dial = d.DialContext
	}
	return g
}

// DialContext is the transport's dialer.
func (g *guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid port %q", portText)
	}
	if err := checkHost(host, g.allowPrivate); err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if addrs, err = g.lookup(ctx, host); err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		if len(addrs) == 0 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errNoAddress}
		}
	}
	// One blocked answer refuses the host: a name that points inside is
	// not fetched, whatever else it points to.
	for _, a := range addrs {
		if err := g.check(host, a); err != nil {
			return nil, err
		}
	}
	var firstErr error
	for _, a := range addrs {
		conn, err := g.dial(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
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

func (g *guard) check(host string, a netip.Addr) error {
	if g.allowPrivate {
		return nil
	}
	if c := classify(a); c != "" {
		return &blockedError{Host: host, Addr: a, Class: c}
	}
	return nil
}

// control runs just before the socket connects, with the address it will
// connect to: the last word on what is dialled.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedError{Host: address, Reason: fmt.Sprintf("cannot check the address %q before connecting", address)}
	}
	return g.check(ap.Addr().String(), ap.Addr())
}
