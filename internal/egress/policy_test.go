package egress

import (
	"net/netip"
	"strings"
	"testing"
)

func TestPolicy_Allowed(t *testing.T) {
	p := Policy{Allow: []string{"github.com", "*.npmjs.org", "example.com:8443", "Proxy.Golang.org."}}
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"github.com", 443, true},
		{"github.com", 80, true},
		{"github.com", 22, false},
		{"api.github.com", 443, false},
		{"registry.npmjs.org", 443, true},
		{"npmjs.org", 443, false},
		{"evilnpmjs.org", 443, false},
		{"example.com", 8443, true},
		{"example.com", 443, false},
		{"proxy.golang.org", 443, true},
		{"PROXY.golang.org.", 443, true},
	} {
		if got := p.allowed(tc.host, tc.port); got != tc.want {
			t.Errorf("allowed(%s, %d) = %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
}

func TestPolicy_CheckPatterns(t *testing.T) {
	for _, bad := range []string{"", "*.com", "a b", "x/y", "host:0", "host:x", "*.*.example.com", "user@host"} {
		if err := (Policy{Allow: []string{bad}}).Check(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := (Policy{GitHosts: map[string]string{"github.com": "ftp://x"}}).Check(); err == nil {
		t.Error("a non-http git base accepted")
	}
}

func TestPolicy_CheckAddr(t *testing.T) {
	p := Policy{
		PrivateOK: []string{"git.internal:443", "127.0.0.1:8080"},
		Deny:      []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080"), netip.MustParseAddrPort("0.0.0.0:9090")},
	}
	for _, tc := range []struct {
		host, addr string
		port       int
		refused    string // "" = allowed
	}{
		{"example.com", "93.184.216.34", 443, ""},
		{"example.com", "10.0.0.1", 443, "private"},
		{"example.com", "::ffff:127.0.0.1", 443, "loopback"},
		{"example.com", "169.254.169.254", 80, "link-local"},
		{"git.internal", "10.0.0.5", 443, ""},
		{"git.internal", "10.0.0.5", 8443, "private"},
		{"127.0.0.1", "127.0.0.1", 8080, "brain's own listeners"},
		{"x", "192.168.1.4", 9090, "brain's own listeners"},
	} {
		err := p.checkAddr(tc.host, tc.port, netip.MustParseAddr(tc.addr))
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s %s:%d refused: %v", tc.host, tc.addr, tc.port, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s %s:%d: %v, want a refusal naming %q", tc.host, tc.addr, tc.port, err, tc.refused)
		}
	}
}

func TestRepoOf(t *testing.T) {
	for path, want := range map[string]string{
		"/acme/app.git/info/refs":        "acme/app info/refs",
		"/Acme/App/git-upload-pack":      "acme/app git-upload-pack",
		"/acme/app.git/git-receive-pack": "acme/app git-receive-pack",
		"/acme/app.git/objects/info/x":   "",
		"/acme/../app.git/info/refs":     "",
		"/acme/app.git/info/refs/extra":  "",
		"/../app.git/info/refs":          "",
		"/acme/...git/info/refs":         "",
	} {
		repo, svc, ok := repoOf(path)
		got := ""
		if ok {
			got = repo + " " + svc
		}
		if got != want {
			t.Errorf("repoOf(%q) = %q, want %q", path, got, want)
		}
	}
}
