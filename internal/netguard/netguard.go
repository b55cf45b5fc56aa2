// Package netguard says which network addresses are not the public
// internet (loopback, private, link-local, and the tunnels and odd forms
// that reach them), so the tools that connect on the model's behalf
// (web_fetch, the sandbox's egress proxy) refuse them the same way.
//
// It imports only the standard library.
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// BlockedError refuses a host or address a tool must not reach. Its text
// always starts with "blocked_host" so the model (and tests) can tell it from
// a network failure.
type BlockedError struct {
	Host   string     // as written in the URL or the dial address
	Addr   netip.Addr // the address it means or resolved to, if known
	Class  string     // "loopback", "private", ...; empty for a non-canonical numeric host
	Reason string     // overrides the generated text when set
}

func (e *BlockedError) Error() string {
	switch {
	case e.Reason != "":
		return "blocked_host: " + e.Reason
	case e.Class == "" && e.Addr.IsValid():
		return fmt.Sprintf("blocked_host: %q is a non-canonical form of the IP address %s; write the address in its usual dotted form", e.Host, e.Addr)
	case e.Class == "":
		return fmt.Sprintf("blocked_host: %q looks like a numeric IP address but is not one in canonical form", e.Host)
	case e.Host == e.Addr.String() || e.Host == "":
		return fmt.Sprintf("blocked_host: %s is %s address", e.Addr, article(e.Class))
	default:
		return fmt.Sprintf("blocked_host: %s resolves to %s, %s address", e.Host, e.Addr, article(e.Class))
	}
}

func article(class string) string {
	if strings.IndexByte("aeiouAEIOU", class[0]) >= 0 {
		return "an " + class
	}
	return "a " + class
}

var ErrNoAddress = errors.New("the host has no IP address")

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
func Classify(a netip.Addr) string {
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

// checkHost applies the pre-dial rules to a host name or IP literal.
func CheckHost(host string, allowPrivate bool) error {
	if host == "" {
		return errors.New("the URL has no host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if c := Classify(a); c != "" && !allowPrivate {
			return &BlockedError{Host: host, Addr: a, Class: c}
		}
		return nil
	}
	if NumericHost(host) {
		// 2130706433, 0x7f000001, 0177.1, 127.1: inet_aton (and browsers)
		// read these as IPv4 addresses, net/netip does not. Refused even
		// with allowPrivate: what they mean depends on who parses them.
		a, _ := LegacyIPv4(host)
		return &BlockedError{Host: host, Addr: a}
	}
	return nil
}

// numericHost reports whether a host name would be read as an IPv4 address
// by a WHATWG URL parser or inet_aton: its last label is a number (decimal,
// or hexadecimal with 0x). Such a host is never a DNS name: no top-level
// domain is numeric.
func NumericHost(host string) bool {
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
func LegacyIPv4(host string) (netip.Addr, bool) {
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
