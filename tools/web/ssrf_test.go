package web_test

import (
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"brain/tools/toolstest"
	"brain/tools/web"
)

func TestFetch_AllowPrivateReachesLoopback(t *testing.T) {
	srv, _ := counted(t, false, serve("text/plain", "hello from 127.0.0.1\r\n"))
	got, err := fetch(t, web.FetchConfig{AllowPrivate: true}, srv.URL+"/x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "hello from 127.0.0.1" || got.Status != 200 || got.URL != srv.URL+"/x" {
		t.Errorf("got %+v", got)
	}
	// The same URL without allow_private is refused before anything is sent.
	_, err = fetch(t, web.FetchConfig{}, srv.URL+"/x")
	toolstest.ToolError(t, err, false, "blocked_host", "127.0.0.1 is a loopback address")
}

// With no hooks, the system resolver maps localhost to loopback (from
// /etc/hosts, no DNS query) and the default path refuses it: no request
// reaches the server.
func TestFetch_LocalhostNameRefused(t *testing.T) {
	srv, hits := counted(t, false, serve("text/plain", "secret"))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	_, err := fetch(t, web.FetchConfig{}, fmt.Sprintf("http://localhost:%d/", port))
	toolstest.ToolError(t, err, false, "blocked_host", "localhost resolves to")
	if hits.Load() != 0 {
		t.Fatal("the server was reached")
	}
}

func TestFetch_BlockedLiterals(t *testing.T) {
	for _, lit := range []string{
		"127.0.0.1", "[::1]", "10.0.0.1", "172.16.0.1", "192.168.0.1", "[fd00::1]", "169.254.169.254",
		"[fe80::1]", "0.0.0.0", "[::]", "224.0.0.1", "[ff02::1]", "100.64.0.1", "[::ffff:127.0.0.1]",
		"[::ffff:a9fe:a9fe]", "[::ffff:192.168.0.1]", "[64:ff9b::7f00:1]",
	} {
		t.Run(lit, func(t *testing.T) {
			n := newFakeNet()
			_, err := fetch(t, n.config(web.FetchConfig{}), "http://"+lit+"/admin")
			toolstest.ToolError(t, err, false, "blocked_host", "nothing was fetched")
			if len(n.dials()) != 0 {
				t.Errorf("dialled %v", n.dials())
			}
		})
	}
}

func TestFetch_BlockedByResolution(t *testing.T) {
	for _, ip := range []string{
		"127.0.0.1", "::1", "10.1.2.3", "172.20.0.1", "192.168.10.10", "fc00::5", "169.254.169.254", "fe80::1",
		"0.0.0.0", "::", "239.1.1.1", "ff05::2", "100.100.100.200", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
		"::ffff:169.254.169.254",
	} {
		t.Run(ip, func(t *testing.T) {
			n := newFakeNet()
			n.name("internal.example.com", ip)
			_, err := fetch(t, n.config(web.FetchConfig{}), "http://internal.example.com/")
			toolstest.ToolError(t, err, false, "blocked_host: internal.example.com resolves to")
			if len(n.dials()) != 0 {
				t.Errorf("dialled %v", n.dials())
			}
		})
	}
}

func TestFetch_NumericHostsRefused(t *testing.T) {
	for _, host := range []string{"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.0.0.1", "017700000001"} {
		for _, allow := range []bool{false, true} {
			n := newFakeNet()
			_, err := fetch(t, n.config(web.FetchConfig{AllowPrivate: allow}), "http://"+host+"/")
			toolstest.ToolError(t, err, false, "blocked_host", "127.0.0.1")
			if len(n.dials()) != 0 || n.lookupCount(host) != 0 {
				t.Errorf("%s: dialled %v, looked up %d times", host, n.dials(), n.lookupCount(host))
			}
		}
	}
}

// net/http maps a Unicode host through IDNA before dialling, so full-width
// digits reach the dialer as an IP address the URL check never saw; the
// dial-time check refuses them.
func TestFetch_FullWidthDigitsRefusedAtDial(t *testing.T) {
	for _, host := range []string{"１２７.０.０.１", "１２７.１", "１０.０.０.１"} {
		n := newFakeNet()
		_, err := fetch(t, n.config(web.FetchConfig{}), "http://"+host+"/")
		toolstest.ToolError(t, err, false, "blocked_host")
		if len(n.dials()) != 0 {
			t.Errorf("%s: dialled %v", host, n.dials())
		}
	}
}

// DNS rebinding: the name first resolves to a public address, then to
// loopback. The first connection goes to the public address; the server
// closes it and redirects to the same name, so the next request dials
// again, and that dial's check sees loopback and refuses it.
func TestFetch_DNSRebindingBlockedAtDial(t *testing.T) {
	public, _ := counted(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		http.Redirect(w, r, "/second", http.StatusFound)
	})
	internal, internalHits := counted(t, false, serve("text/plain", "internal secret"))
	n := newFakeNet()
	n.name("rebind.example.com", publicIP, "127.0.0.1")
	n.route(publicIP, public)
	n.route("127.0.0.1", internal)
	_, err := fetch(t, n.config(web.FetchConfig{}), "http://rebind.example.com/first")
	toolstest.ToolError(t, err, false, "blocked_host: rebind.example.com resolves to 127.0.0.1, a loopback address")
	if internalHits.Load() != 0 {
		t.Fatal("the internal server was reached")
	}
	if n.lookupCount("rebind.example.com") != 2 || fmt.Sprint(n.dials()) != "["+publicIP+":80]" {
		t.Errorf("looked up %d times, dialled %v", n.lookupCount("rebind.example.com"), n.dials())
	}
}

func TestFetch_Redirects(t *testing.T) {
	internal, internalHits := counted(t, false, serve("text/plain", "internal"))
	var hops atomic.Int32
	srv, _ := counted(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-literal":
			http.Redirect(w, r, internal.URL+"/", http.StatusFound)
		case "/to-private-name":
			http.Redirect(w, r, "http://db.corp.example.com/", http.StatusMovedPermanently)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-decimal":
			http.Redirect(w, r, "http://2130706433/", http.StatusFound)
		case "/loop":
			hops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/chain":
			// Five redirects, then the page: the most that is followed.
			if i := hops.Add(1); i <= 5 {
				http.Redirect(w, r, "/chain", http.StatusTemporaryRedirect)
				return
			}
			io.WriteString(w, "end of chain")
		}
	})
	n := newFakeNet()
	n.name("www.example.com", publicIP)
	n.name("db.corp.example.com", "10.0.0.12")
	n.route(publicIP, srv)
	n.route("10.0.0.12", internal)
	cfg := n.config(web.FetchConfig{})
	for path, want := range map[string]string{
		"/to-literal":      "blocked_host: 127.0.0.1 is a loopback address",
		"/to-private-name": "blocked_host: db.corp.example.com resolves to 10.0.0.12, a private address",
		"/to-file":         `unsupported scheme "file"`,
		"/to-decimal":      `"2130706433" is a non-canonical form of the IP address 127.0.0.1`,
		"/loop":            "already followed 5 redirects",
	} {
		_, err := fetch(t, cfg, "http://www.example.com"+path)
		toolstest.ToolError(t, err, false, want)
	}
	if internalHits.Load() != 0 {
		t.Fatal("a redirect reached the internal server")
	}
	if hops.Load() != 6 {
		t.Errorf("the loop was requested %d times, want 6 (the first + 5 redirects)", hops.Load())
	}
	hops.Store(0)
	got, err := fetch(t, cfg, "http://www.example.com/chain")
	if err != nil || got.Content != "end of chain" || got.URL != "http://www.example.com/chain" {
		t.Fatalf("chain of 5: %+v, %v", got, err)
	}
}

func TestFetch_TLS(t *testing.T) {
	srv, hits := counted(t, true, serve("text/html", "<title>Secure</title><p>ok</p>"))
	trusted := x509.NewCertPool()
	trusted.AddCert(srv.Certificate())
	n := newFakeNet()
	n.name("example.com", publicIP)
	n.name("other.test", publicIP)
	n.route(publicIP, srv)

	got, err := fetch(t, n.config(web.FetchConfig{RootCAs: trusted}), "https://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Secure" || got.Content != "ok" {
		t.Errorf("got %+v", got)
	}
	// An untrusted certificate, and a trusted one for another name, fail
	// the handshake: nothing is sent.
	_, err = fetch(t, n.config(web.FetchConfig{RootCAs: x509.NewCertPool()}), "https://example.com/")
	toolstest.ToolError(t, err, false, "TLS certificate could not be verified", "nothing was sent")
	_, err = fetch(t, n.config(web.FetchConfig{RootCAs: trusted}), "https://other.test/")
	toolstest.ToolError(t, err, false, "certificate", "other.test", "nothing was sent")
	if hits.Load() != 1 {
		t.Errorf("hits = %d, want 1", hits.Load())
	}
}
