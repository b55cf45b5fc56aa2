package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// blockedAddrs is one address of every refused class, with the class
// classify names. IPv4-mapped and embedding IPv6 forms are judged as the
// IPv4 address they carry.
var blockedAddrs = []struct{ addr, class string }{
	{"0.0.0.0", "unspecified"},
	{"0.1.2.3", "unspecified"},
	{"::", "unspecified"},
	{"127.0.0.1", "loopback"},
	{"127.255.0.9", "loopback"},
	{"::1", "loopback"},
	{"10.0.0.1", "private"},
	{"172.16.5.4", "private"},
	{"172.31.255.255", "private"},
	{"192.168.1.1", "private"},
	{"fc00::1", "private"},
	{"fd12:3456::1", "private"},
	{"169.254.169.254", "link-local"},
	{"fe80::1", "link-local"},
	{"fe80::1%eth0", "link-local"},
	{"224.0.0.1", "multicast"},
	{"239.255.255.250", "multicast"},
	{"ff02::1", "multicast"},
	{"100.64.0.1", "shared (CGNAT)"},
	{"100.127.255.254", "shared (CGNAT)"},
	{"192.0.0.8", "reserved"},
	{"198.18.0.1", "reserved"},
	{"240.0.0.1", "reserved"},
	{"255.255.255.255", "reserved"},
	{"::ffff:127.0.0.1", "loopback"},
	{"::ffff:7f00:1", "loopback"},
	{"::ffff:10.1.2.3", "private"},
	{"::ffff:169.254.169.254", "link-local"},
	{"::ffff:100.64.0.1", "shared (CGNAT)"},
	{"::ffff:0.0.0.0", "unspecified"},
	{"::127.0.0.1", "IPv4-compatible"},
	{"64:ff9b::127.0.0.1", "IPv6-embedded loopback"},
	{"64:ff9b::a9fe:a9fe", "IPv6-embedded link-local"},
	{"::ffff:0:10.0.0.1", "IPv6-embedded private"},
	{"2002:7f00:1::", "IPv6-embedded loopback"},
	{"2002:c0a8:101::1", "IPv6-embedded private"},
	{"64:ff9b:1::1", "private"},
	{"2001:0:4136:e378::1", "Teredo"},
	{"fec0::1", "site-local"},
	{"100::1", "reserved"},
}

var publicAddrs = []string{
	"93.184.215.14", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255",
	"172.32.0.0", "192.167.255.255", "169.253.0.1", "223.255.255.255",
	"2606:2800:21f:cb07:6820:80da:af6b:8b2c", "2001:4860:4860::8888", "::ffff:8.8.8.8",
	"64:ff9b::8.8.8.8", "2002:808:808::1",
}

func TestClassify(t *testing.T) {
	for _, tc := range blockedAddrs {
		if got := classify(netip.MustParseAddr(tc.addr)); got != tc.class {
			t.Errorf("classify(%s) = %q, want %q", tc.addr, got, tc.class)
		}
	}
	for _, a := range publicAddrs {
		if got := classify(netip.MustParseAddr(a)); got != "" {
			t.Errorf("classify(%s) = %q, want public", a, got)
		}
	}
	if got := classify(netip.Addr{}); got == "" {
		t.Error("the zero Addr must not be public")
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url, want    string // want "" means accepted; else a substring of the error
		allowPrivate bool
	}{
		{"http://example.com/", "", false},
		{"HTTPS://example.com:8443/a?b#c", "", false},
		{"http://93.184.215.14/", "", false},
		{"http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/", "", false},
		{"http://abc.de/", "", false}, // hex letters are a name, not a number
		{"http://deadbeef/", "", false},
		{"http://1.2.3.example/", "", false},
		{"ftp://example.com/", "unsupported scheme", false},
		{"file:///etc/passwd", "unsupported scheme", false},
		{"gopher://example.com/", "unsupported scheme", false},
		{"javascript:alert(1)", "unsupported scheme", false},
		{"//example.com/", "no scheme", false},
		{"http:example.com", "no host", false},
		{"http:///path", "no host", false},
		{"http://user:pw@example.com/", "credentials", false},
		{"http://127.0.0.1/", "blocked_host: 127.0.0.1 is a loopback address", false},
		{"http://127.0.0.1:8080/", "", true},
		{"http://[::1]/", "blocked_host", false},
		{"http://[::ffff:127.0.0.1]/", "loopback", false},
		{"http://[::ffff:7f00:1]/", "loopback", false},
		{"http://[fe80::1%25eth0]/", "link-local", false},
		{"http://169.254.169.254/latest/meta-data/", "link-local", false},
		{"http://2130706433/", `blocked_host: "2130706433" is a non-canonical form of the IP address 127.0.0.1`, false},
		{"http://2130706433/", "non-canonical", true},
		{"http://0x7f000001/", "127.0.0.1", false},
		{"http://0X7F.1/", "127.0.0.1", false},
		{"http://0177.0.0.1/", "127.0.0.1", false},
		{"http://017700000001/", "127.0.0.1", false},
		{"http://127.1/", "127.0.0.1", false},
		{"http://127.0.1/", "127.0.0.1", false},
		{"http://127.0.0.1./", "127.0.0.1", false},
		{"http://10.0.0.01/", "10.0.0.1", false},
		{"http://3627734734/", "216.58.214.206", false}, // public, still refused: not canonical
		{"http://99999999999/", "not one in canonical form", false},
		{"http://1.2.3.4.5/", "not one in canonical form", false},
		{"http://foo.0x/", "not one in canonical form", false},
		{"http://08.1/", "not one in canonical form", false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatalf("parse %q: %v", tc.url, err)
		}
		err = checkURL(u, tc.allowPrivate)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkURL(%q) = %v, want accepted", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("checkURL(%q, allowPrivate=%v) = %v, want an error containing %q", tc.url, tc.allowPrivate, err, tc.want)
		}
	}
}

func TestLegacyIPv4(t *testing.T) {
	for in, want := range map[string]string{
		"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0x7F.0x0.0x0.0x1": "127.0.0.1",
		"0177.0.0.1": "127.0.0.1", "127.1": "127.0.0.1", "127.0.1": "127.0.0.1", "10.1": "10.0.0.1",
		"0": "0.0.0.0", "0x": "0.0.0.0", "4294967295": "255.255.255.255", "1.2.3.4.": "1.2.3.4",
	} {
		got, ok := legacyIPv4(in)
		if !ok || got.String() != want {
			t.Errorf("legacyIPv4(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"4294967296", "256.1.1.1", "1.2.3.256", "1.2.65536", "08", "1.2.3.4.5", "1..2", "0xg", "", "-1"} {
		if got, ok := legacyIPv4(in); ok {
			t.Errorf("legacyIPv4(%q) = %v, want no address", in, got)
		}
	}
}

// The default dialer's Control refuses a blocked address even when it is
// handed one directly, past DialContext's own check: it is the check on
// the address the socket actually connects to.
func TestGuard_ControlRefusesAtTheSocket(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	g := newGuard(FetchConfig{})
	conn, err := g.dial(context.Background(), "tcp", srv.Listener.Addr().String())
	if err == nil {
		conn.Close()
		t.Fatal("the default dialer connected to a loopback address")
	}
	var be *blockedError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "blocked_host") {
		t.Fatalf("err = %v, want a blocked_host error", err)
	}
	for _, tc := range blockedAddrs {
		ap := netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 80).String()
		if err := g.control("tcp", ap, nil); err == nil {
			t.Errorf("control(%s) allowed a %s address", ap, tc.class)
		}
	}
	if err := g.control("tcp", "93.184.215.14:443", nil); err != nil {
		t.Errorf("control refused a public address: %v", err)
	}
	if err := g.control("unix", "/tmp/sock", nil); err == nil {
		t.Error("control allowed an address it cannot parse")
	}
	allow := newGuard(FetchConfig{AllowPrivate: true})
	conn, err = allow.dial(context.Background(), "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("allow_private: %v", err)
	}
	conn.Close()
}

// A host with one blocked address among public ones is refused whole, and
// nothing is dialled.
func TestGuard_MixedAnswersRefused(t *testing.T) {
	dialled := false
	g := newGuard(FetchConfig{
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.7")}, nil
		},
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			dialled = true
			return nil, errors.New("unreachable")
		},
	})
	_, err := g.DialContext(context.Background(), "tcp", "mixed.example.com:80")
	if err == nil || !strings.Contains(err.Error(), "blocked_host: mixed.example.com resolves to 10.0.0.7, a private address") {
		t.Fatalf("err = %v", err)
	}
	if dialled {
		t.Fatal("dialled a host with a blocked address")
	}
}
