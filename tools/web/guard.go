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
)

// blockedError refuses a host or address web_fetch must not reach. Its text
// always starts with "blocked_host" so the model (and tests) can tell it from
// a network failure.
type blockedError struct {
	host   string     // as written in the URL or the dial address
	addr   netip.Addr // the address it means or resolved to, if known
	class  string     // "loopback", "private", ...; empty for a non-canonical numeric host
	reason string     // overrides the generated text when set
}

func (e *blockedError) Error() string {
	switch {
	case e.reason != "":
		return "blocked_host: " + e.reason
	case e.class == "" && e.addr.IsValid():
		return fmt.Sprintf("blocked_host: %q is a non-canonical form of the IP address %s; write the address in its usual dotted form", e.host, e.addr)
	case e.class == "":
		return fmt.Sprintf("blocked_host: %q looks like a numeric IP address but is not one in canonical form", e.host)
	case e.host == e.addr.String() || e.host == "":
		return fmt.Sprintf("blocked_host: %s is %s address", e.addr, article(e.class))
	default:
		return fmt.Sprintf("blocked_host: %s resolves to %s, %s address", e.host, e.addr, article(e.class))
	}
}

func article(class string) string {
	if strings.IndexByte("aeiouAEIOU", class[0]) >= 0 {
		return "an " + class
	}
	return "a " + class
}

var errNoAddress = errors.New("the host has no IP address")

// Ranges refused besides what netip's predicates cover. Each is a network
// that is not the public internet, or a tunnel that reaches IPv4 space.
var (
	v4Blocked = []struct {
		prefix netip.Prefix
		class  string
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},        // "this network"; 0.0.0.0 reaches localhost on Linux
		{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"}, // RFC 6598
		{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},        // IETF protocol assignments
		{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},       // benchmarking
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},         // includes 255.255.255.255
	}
	v6Blocked = []struct {
		prefix netip.Prefix
		class  string
	}{
		{netip.MustParsePrefix("::/96"), "IPv4-compatible"},  // deprecated; ::/128 and ::1 are caught before
		{netip.MustParsePrefix("100::/64"), "reserved"},      // discard-only
		{netip.MustParsePrefix("64:ff9b:1::/48"), "private"}, // local-use NAT64
		{netip.MustParsePrefix("2001::/32"), "Teredo"},       // IPv4 tunnel with an obfuscated address
		{netip.MustParsePrefix("fec0::/10"), "site-local"},   // deprecated
	}
	// Prefixes whose addresses embed an IPv4 address at a byte offset: the
	// IPv4 address is checked as if it were dialled.
	v6Embedded = []struct {
		prefix netip.Prefix
		offset int
	}{
		{netip.MustParsePrefix("64:ff9b::/96"), 12},    // NAT64 well-known prefix
		{netip.MustParsePrefix("::ffff:0:0:0/96"), 12}, // SIIT IPv4-translated
		{netip.MustParsePrefix("2002::/16"), 2},        // 6to4
	}
)

// classify names the kind of non-public address a is, or returns "" when a
// may be fetched. IPv4-mapped IPv6 addresses are judged as their IPv4 form.
func classify(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid"
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return classify4(a)
	}
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsMulticast():
		return "multicast"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsPrivate():
		return "private"
	}
	for _, b := range v6Blocked {
		if b.prefix.Contains(a) {
			return b.class
		}
	}
	for _, e := range v6Embedded {
		if e.prefix.Contains(a) {
			b := a.As16()
			v4 := netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))
			if c := classify4(v4); c != "" {
				return "IPv6-embedded " + c
			}
		}
	}
	return ""
}

func classify4(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	}
	for _, b := range v4Blocked {
		if b.prefix.Contains(a) {
			return b.class
		}
	}
	return ""
}

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

// checkHost applies the pre-dial rules to a host name or IP literal.
func checkHost(host string, allowPrivate bool) error {
	if host == "" {
		return errors.New("the URL has no host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if c := classify(a); c != "" && !allowPrivate {
			return &blockedError{host: host, addr: a, class: c}
		}
		return nil
	}
	if numericHost(host) {
		// 2130706433, 0x7f000001, 0177.1, 127.1: inet_aton (and browsers)
		// read these as IPv4 addresses, net/netip does not. Refused even
		// with allowPrivate: what they mean depends on who parses them.
		a, _ := legacyIPv4(host)
		return &blockedError{host: host, addr: a}
	}
	return nil
}

// numericHost reports whether a host name would be read as an IPv4 address
// by a WHATWG URL parser or inet_aton: its last label is a number (decimal,
// or hexadecimal with 0x). Such a host is never a DNS name: no top-level
// domain is numeric.
func numericHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for _, c := range last[2:] {
			if !isHex(c) {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isHex(c rune) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// legacyIPv4 decodes the inet_aton forms of an IPv4 address: one to four
// dot-separated parts, each decimal, octal (leading 0) or hexadecimal (0x);
// the last part fills the remaining bytes. It is used to say what a refused
// numeric host means.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
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
		return &blockedError{host: host, addr: a, class: c}
	}
	return nil
}

// control runs just before the socket connects, with the address it will
// connect to: the last word on what is dialled.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedError{host: address, reason: fmt.Sprintf("cannot check the address %q before connecting", address)}
	}
	return g.check(ap.Addr().String(), ap.Addr())
}
