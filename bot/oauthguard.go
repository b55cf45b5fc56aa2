package bot

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"brain/internal/netguard"
)

// oauthHTTP is the HTTP client of one MCP server's OAuth: discovery,
// metadata, registration and token requests. Their URLs come from the
// server's answers (a challenge's resource_metadata, the authorization
// servers it names), so a server could point brain at the inside of its
// own network; the client refuses loopback, private and link-local
// addresses (netguard, checked on the address actually dialled) unless
// the configured server itself is at such an address, where its
// authorization server may well be too. It follows no redirects and uses
// no proxy from the environment (the check must see the real peer).
func oauthHTTP(serverURL string) *http.Client {
	allow := privateServer(serverURL)
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		return checkDialled(address, allow)
	}}
	tr := &http.Transport{
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		MaxIdleConns:          4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: tr, CheckRedirect: noRedirects}
}

// checkDialled refuses an address of a blocked class unless allowed.
func checkDialled(address string, allowPrivate bool) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if c := netguard.Classify(a); c != "" && !allowPrivate {
		return &netguard.BlockedError{Host: host, Addr: a, Class: c}
	}
	return nil
}

// privateServer reports whether the configured server is itself on a
// loopback or private address (an IP literal of a blocked class, or
// localhost): then its OAuth endpoints may be too.
func privateServer(serverURL string) bool {
	u, err := url.Parse(serverURL)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && netguard.Classify(a) != ""
}
