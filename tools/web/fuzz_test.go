package web

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// Seed corpora are committed under testdata/fuzz/<target>/; the f.Add
// seeds below cover the shapes the table tests use.

func FuzzExtractHTML(f *testing.F) {
	for _, s := range []string{
		"", "plain text", "<p>a</p><p>b</p>", "<title>T</title><script>x</script>y",
		"<pre>\n a\n\n\n b</pre>", "<a title=it's>x</a>", "<!-->a<!--->b<!-- c", "<svg/>x<svg>y</svg>",
		"<nav><nav>a</nav>b</nav>c", "a<SCRIPT>b</scripts></SCRIPT >c", "&amp;&lt;&#x1F600;&bogus;",
		"<h1>x</h1><li>y", "\xff\xfe<p>\x00</p>", "<textarea>&lt;b&gt;</textarea>", "1 < 2 <3 </ 4>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		title, text := extractHTML(in)
		if !utf8.ValidString(title) || !utf8.ValidString(text) {
			t.Fatalf("invalid UTF-8: title %q text %q", title, text)
		}
		if text != strings.TrimSpace(text) {
			t.Fatalf("text not trimmed: %q", text)
		}
		if strings.ContainsAny(title, "\n\t") || title != strings.TrimSpace(title) {
			t.Fatalf("title not collapsed: %q", title)
		}
		low := strings.ToLower(in)
		if !strings.Contains(low, "<pre") && !strings.Contains(low, "<xmp") && !strings.Contains(low, "<textarea") {
			if strings.Contains(text, "\n\n\n") {
				t.Fatalf("three newlines in %q", text)
			}
		}
		if !strings.ContainsAny(in, "<&") {
			want := strings.Join(strings.Fields(strings.ToValidUTF8(in, "\uFFFD")), " ")
			if text != want || title != "" {
				t.Fatalf("plain text %q: got %q, want %q", in, text, want)
			}
		}
		if s := snippet(in); strings.ContainsAny(s, "\n\t") {
			t.Fatalf("snippet has line breaks: %q", s)
		}
	})
}

// FuzzCheckHost checks that the URL check, the address classes and the
// dialer agree: a blocked IP literal is refused on every path, numeric
// non-canonical hosts are always refused, allowPrivate only ever allows
// more, and an IPv4 address is judged the same in its mapped and NAT64
// IPv6 forms.
func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{
		"example.com", "127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "2130706433", "0x7f000001", "0177.0.0.1",
		"127.1", "10.0.0.1:8080", "[fe80::1%25eth0]", "169.254.169.254", "93.184.215.14", "abc.de", "1.2.3.4.5",
		"[64:ff9b::a00:1]", "[2002:a00:1::]", "100.64.0.1", "localhost", "user@127.0.0.1", "0x", "08.1", "127.0.0.1.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		u, err := url.Parse("http://" + host + "/")
		if err != nil {
			return
		}
		strict, loose := checkURL(u, false), checkURL(u, true)
		if strict == nil && loose != nil {
			t.Fatalf("%q: allowed strictly but refused with allowPrivate: %v", host, loose)
		}
		name := u.Hostname()
		addr, literalErr := netip.ParseAddr(name)
		literal := literalErr == nil
		if literal && classify(addr) != "" && strict == nil {
			t.Fatalf("%q: the %s address %s was allowed", host, classify(addr), addr)
		}
		if literal && classify(addr) == "" && u.User == nil && strict != nil {
			t.Fatalf("%q: the public address %s was refused: %v", host, addr, strict)
		}
		if !literal && name != "" && numericHost(name) && (strict == nil || loose == nil) {
			t.Fatalf("%q: a numeric host was allowed", host)
		}
		if a, ok := legacyIPv4(name); ok && !literal && strict == nil {
			t.Fatalf("%q: a legacy form of %s was allowed", host, a)
		}
		if literal && addr.Is4() {
			mapped := netip.AddrFrom16(addr.As16())
			b := netip.MustParseAddr("64:ff9b::").As16()
			copy(b[12:], addr.AsSlice())
			nat64 := netip.AddrFrom16(b)
			if c := classify(addr); classify(mapped) != c || (c == "") != (classify(nat64) == "") {
				t.Fatalf("%s is %q, mapped %q, NAT64 %q", addr, c, classify(mapped), classify(nat64))
			}
		}
		// The dialer refuses what the URL check refuses, before dialling.
		if name == "" || strings.ContainsAny(name, "[]") {
			return
		}
		dialled := false
		g := newGuard(FetchConfig{
			LookupIP: func(context.Context, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
			},
			DialContext: func(context.Context, string, string) (net.Conn, error) {
				dialled = true
				return nil, errors.New("test: not dialling")
			},
		})
		_, err = g.DialContext(context.Background(), "tcp", net.JoinHostPort(name, "80"))
		var be *blockedError
		if checkHost(name, false) != nil && (dialled || !errors.As(err, &be)) {
			t.Fatalf("%q: the URL check refuses it but the dialer did not (err %v, dialled %v)", name, err, dialled)
		}
	})
}
