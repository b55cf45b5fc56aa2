package web_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"brain/tools/web"
)

// publicIP stands for a server on the internet. Tests never reach it: the
// fake network routes it to a local httptest server.
const publicIP = "93.184.215.14"

// fakeNet stands in for DNS and the network, below web_fetch's checks.
// Pointing a name at 127.0.0.1 here exercises the refusal; the happy path
// without AllowPrivate points a name at publicIP and routes publicIP to a
// local server. The check then sees the public address, which is what it
// would see in production; only the packets' real destination is faked,
// as a router would deliver them.
type fakeNet struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // successive answers; the last repeats
	lookups map[string]int
	routes  map[netip.Addr]string // dialled IP -> real listener address
	dialled []string
}

func newFakeNet() *fakeNet {
	return &fakeNet{answers: map[string][][]netip.Addr{}, lookups: map[string]int{}, routes: map[netip.Addr]string{}}
}

// name sets what host resolves to, one answer per lookup.
func (n *fakeNet) name(host string, answers ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range answers {
		var addrs []netip.Addr
		for _, s := range strings.Split(a, ",") {
			addrs = append(addrs, netip.MustParseAddr(s))
		}
		n.answers[host] = append(n.answers[host], addrs)
	}
}

func (n *fakeNet) route(ip string, srv *httptest.Server) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.routes[netip.MustParseAddr(ip)] = srv.Listener.Addr().String()
}

func (n *fakeNet) LookupIP(_ context.Context, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	as := n.answers[host]
	if len(as) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(n.lookups[host], len(as)-1)
	n.lookups[host]++
	return as[i], nil
}

func (n *fakeNet) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap := netip.MustParseAddrPort(address)
	n.mu.Lock()
	n.dialled = append(n.dialled, address)
	real, ok := n.routes[ap.Addr()]
	n.mu.Unlock()
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("no route to host (test network)")}
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", real)
}

func (n *fakeNet) dials() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.dialled...)
}

func (n *fakeNet) lookupCount(host string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lookups[host]
}

func (n *fakeNet) config(cfg web.FetchConfig) web.FetchConfig {
	cfg.LookupIP, cfg.DialContext = n.LookupIP, n.DialContext
	return cfg
}

// counted is a local server that counts the requests it receives.
func counted(t *testing.T, tls bool, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	})
	srv := httptest.NewUnstartedServer(wrapped)
	// Refused handshakes are the point of some tests; keep them quiet.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &hits
}

func serve(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		io.WriteString(w, body)
	}
}
