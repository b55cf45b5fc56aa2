package tools_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"brain/tools"
	"brain/tools/toolstest"
)

var methods = []string{"GET", "HEAD", "DELETE", "PUT", "POST", "PATCH", "OPTIONS"}

type dispatch struct {
	method string
	key    bool // an Idempotency-Key header
	body   bool
}

func (d dispatch) String() string {
	return fmt.Sprintf("%s key=%v body=%v", d.method, d.key, d.body)
}

// replayable is net/http's own rule (Request.isReplayable): which requests
// a plain Transport sends again after a reused connection fails.
func (d dispatch) replayable() bool {
	switch d.method {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return d.key
}

func dispatches() []dispatch {
	var all []dispatch
	for _, m := range methods {
		for _, key := range []bool{false, true} {
			for _, body := range []bool{false, true} {
				all = append(all, dispatch{m, key, body})
			}
		}
	}
	return all
}

// send sends d to the target's /things/1 through c.
func (d dispatch) send(t *testing.T, c *http.Client, target *toolstest.DropTarget) error {
	t.Helper()
	var body io.Reader
	if d.body {
		body = strings.NewReader(`{"title":"x"}`) // NewRequest sets GetBody for it
	}
	req, err := http.NewRequestWithContext(context.Background(), d.method, target.URL()+"/things/1", body)
	if err != nil {
		t.Fatal(err)
	}
	if d.key {
		req.Header.Set("Idempotency-Key", "sess-1:call-1")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// TestOnceTransport_NeverResends sends two requests, one after the other,
// to a target that drops the second request of a connection. A plain
// Transport reuses the connection and, for a replayable request, sends the
// second request again on a new one: the target sees it twice. Through
// OnceTransport the target sees each request exactly once.
func TestOnceTransport_NeverResends(t *testing.T) {
	for _, d := range dispatches() {
		t.Run(d.String(), func(t *testing.T) {
			t.Run("plain transport", func(t *testing.T) {
				// The control: it proves the target triggers net/http's
				// re-send, so the check below can fail.
				target := toolstest.NewDropTarget(t, 1, nil)
				c := &http.Client{Transport: &http.Transport{}}
				_ = d.send(t, c, target)
				_ = d.send(t, c, target)
				if got := len(target.Requests()); d.replayable() && got != 3 {
					t.Fatalf("target saw %d requests for 2 sent, want 3: the plain transport re-sends a replayable request", got)
				}
			})
			t.Run("once", func(t *testing.T) {
				target := toolstest.NewDropTarget(t, 1, nil)
				c := &http.Client{Transport: tools.OnceTransport(&http.Transport{})}
				for i := range 2 {
					if err := d.send(t, c, target); err != nil {
						t.Fatalf("request %d: %v", i+1, err)
					}
				}
				if got := len(target.Requests()); got != 2 {
					t.Fatalf("target saw %d requests for 2 sent, want 2", got)
				}
			})
			t.Run("once, connection dropped", func(t *testing.T) {
				target := toolstest.NewDropTarget(t, 0, nil)
				c := &http.Client{Transport: tools.OnceTransport(&http.Transport{})}
				if err := d.send(t, c, target); err == nil {
					t.Fatal("a dropped request succeeded")
				}
				if got := len(target.Requests()); got != 1 {
					t.Fatalf("target saw %d requests for 1 sent, want 1", got)
				}
			})
		})
	}
}

// TestOnceTransport_KeepsBase checks the copy keeps base's dialer (tools/web
// guards the address it dials with it) and leaves base as it was.
func TestOnceTransport_KeepsBase(t *testing.T) {
	target := toolstest.NewDropTarget(t, 1, nil)
	var dials atomic.Int64
	base := &http.Transport{
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{NextProtos: []string{"h2", "http/1.1"}},
	}
	c := &http.Client{Transport: tools.OnceTransport(base)}
	for range 2 {
		if err := (dispatch{method: "GET"}).send(t, c, target); err != nil {
			t.Fatal(err)
		}
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("base's dialer dialled %d times for 2 requests, want 2", n)
	}
	if base.DisableKeepAlives || base.Protocols != nil || strings.Join(base.TLSClientConfig.NextProtos, ",") != "h2,http/1.1" {
		t.Errorf("base was changed: keep-alives off %v, protocols %v, ALPN %v", base.DisableKeepAlives, base.Protocols, base.TLSClientConfig.NextProtos)
	}
}

// TestOnceTransport_HTTP1Only checks that a dispatch speaks HTTP/1.1 to a
// server that offers HTTP/2, even through a base that was already used
// (and so has HTTP/2 registered).
func TestOnceTransport_HTTP1Only(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	base := srv.Client().Transport.(*http.Transport)
	proto := func(c *http.Client) string {
		t.Helper()
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := proto(&http.Client{Transport: base}); got != "HTTP/2.0" {
		t.Fatalf("the base client spoke %s; the test needs a server and base that use HTTP/2", got)
	}
	if got := proto(&http.Client{Transport: tools.OnceTransport(base)}); got != "HTTP/1.1" {
		t.Errorf("a dispatch spoke %s, want HTTP/1.1", got)
	}
}

func TestOnceClient(t *testing.T) {
	redirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	given := &http.Client{CheckRedirect: redirect}
	c := tools.OnceClient(given)
	if tr, ok := c.Transport.(*http.Transport); !ok || !tr.DisableKeepAlives {
		t.Errorf("transport %T is not a once transport", c.Transport)
	}
	if c.CheckRedirect == nil || given.Transport != nil {
		t.Error("OnceClient dropped the redirect policy or changed the given client")
	}
	opaque := roundTripperFunc(func(*http.Request) (*http.Response, error) { return nil, io.EOF })
	if c := tools.OnceClient(&http.Client{Transport: opaque}); c.Transport == nil {
		t.Error("an opaque transport was dropped")
	} else if _, ok := c.Transport.(roundTripperFunc); !ok {
		t.Errorf("an opaque transport was replaced by %T", c.Transport)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestKeyedClient: with no client given, the own one follows no redirect
// (the key would go along) and sends at most once; a given client gets
// its once copy and keeps its redirect policy.
func TestKeyedClient(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	own := tools.KeyedClient(nil)
	resp, err := own.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || hits.Load() != 1 {
		t.Fatalf("status %d after %d requests, want the 302 itself", resp.StatusCode, hits.Load())
	}
	if tr, ok := own.Transport.(*http.Transport); !ok || !tr.DisableKeepAlives {
		t.Fatalf("own transport %T is not a once transport", own.Transport)
	}
	given := &http.Client{Transport: &http.Transport{}}
	c := tools.KeyedClient(given)
	if tr, ok := c.Transport.(*http.Transport); !ok || !tr.DisableKeepAlives || c == given {
		t.Fatalf("given client's transport %T was not replaced by its once copy", c.Transport)
	}
	if c.CheckRedirect != nil {
		t.Fatal("the given client's redirect policy changed")
	}
}
