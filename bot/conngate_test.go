package bot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/webhooks/slackhook"
)

// TestHTTPServer_TrickleFloodLeavesWebhooksServed opens 1,100 connections
// on loopback that send a request line and then a byte every 500 ms (more
// than limits.max_connections, 1024), then sends a signed Slack event and
// a /healthz from the same address: both are answered within Slack's 3 s.
func TestHTTPServer_TrickleFloodLeavesWebhooksServed(t *testing.T) {
	sa := newSlackApp(t)
	const flood = 1100
	conns := make([]net.Conn, 0, flood)
	var mu sync.Mutex
	for i := 0; i < flood; i++ {
		c, err := net.Dial("tcp", sa.app.Addr())
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		_, _ = fmt.Fprintf(c, "POST /v1/sessions HTTP/1.1\r\n")
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the trickle: one header byte per connection every 500 ms
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				mu.Lock()
				for _, c := range conns {
					_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
					_, _ = c.Write([]byte("X"))
				}
				mu.Unlock()
			}
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(time.Second) // the flood is accepted and trickling

	client := &http.Client{Timeout: patience, Transport: &http.Transport{DisableKeepAlives: true}}
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": "EvFlood", "event_time": 1,
		"event": map[string]any{"type": "app_mention", "user": "U1", "text": "<@" + slackfake.BotUserID + "> hello", "ts": "1.000100", "channel": "C1", "channel_type": "channel"},
	})
	req, _ := http.NewRequest("POST", sa.base+"/slack/events", bytes.NewReader(body))
	ts := strconv.FormatInt(sa.clock.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slackhook.HeaderTimestamp, ts)
	req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, ts, body))
	for _, r := range []*http.Request{req, mustRequest(t, "GET", sa.base+"/healthz")} {
		began := time.Now()
		resp, err := client.Do(r)
		took := time.Since(began)
		if err != nil {
			t.Fatalf("%s under the flood: %v after %s", r.URL.Path, err, took)
		}
		resp.Body.Close()
		t.Logf("%s answered %d in %s under %d trickling connections", r.URL.Path, resp.StatusCode, took, flood)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", r.URL.Path, resp.StatusCode)
		}
		if took > 3*time.Second {
			t.Errorf("%s took %s: Slack gives up after 3 s", r.URL.Path, took)
		}
	}
	g := sa.app.listener.(*gate)
	g.mu.Lock()
	pending := 0
	for c := range g.conns {
		if c.pending && !c.closed {
			pending++
		}
	}
	g.mu.Unlock()
	if pending > sa.app.cfg.Limits.MaxPendingPerClient {
		t.Errorf("%d connections from one address wait for a request; the bound is %d", pending, sa.app.cfg.Limits.MaxPendingPerClient)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHTTPServer_TrickledHeadersAreCut: a connection that sends its
// headers slower than the minimum rate is closed by the server.
func TestHTTPServer_TrickledHeadersAreCut(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	c := ta.dial()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a byte a second: far below the rate
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte("X")); err != nil {
					return
				}
			}
		}
	}()
	// Cut well before the 10 s header timeout would: the rate allows the
	// grace and a few dozen bytes' worth.
	_ = c.SetReadDeadline(time.Now().Add(6 * time.Second))
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("a connection trickling its headers still held after 6 s")
	}
}

// TestHTTPServer_BusyFloodLeavesWebhooksReserved: 1,100 connections from
// loopback each send a whole request to /v1/sessions and then hold its
// body back, so every connection is busy with a request (neither pending
// nor idle: nothing the gate may close). Webhooks keep reserved capacity:
// past max_connections other routes are answered 503 at once, and a
// signed Slack event is answered.
func TestHTTPServer_BusyFloodLeavesWebhooksReserved(t *testing.T) {
	sa := newSlackApp(t)
	const flood = 1100
	maxConns := sa.app.cfg.Limits.MaxConnections
	if maxConns >= flood {
		t.Fatalf("max_connections %d: the flood of %d does not fill it", maxConns, flood)
	}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	g := sa.app.listener.(*gate)
	busy := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.general
	}
	// In batches under max_pending_per_client, each running before the
	// next is sent (one address's pending connections are bounded).
	waitBusy := func(n int) {
		deadline := time.Now().Add(patience)
		for busy() < n && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	for i := 0; i < flood; i++ {
		if i%32 == 0 {
			waitBusy(min(i, maxConns))
		}
		c, err := net.Dial("tcp", sa.app.Addr())
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		_, _ = fmt.Fprintf(c, "POST /v1/sessions HTTP/1.1\r\nHost: brain\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
		conns = append(conns, c)
	}
	waitBusy(maxConns)
	if n := busy(); n != maxConns {
		t.Fatalf("%d requests of the flood run; want max_connections, %d", n, maxConns)
	}

	client := &http.Client{Timeout: patience, Transport: &http.Transport{DisableKeepAlives: true}}
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": "EvBusyFlood", "event_time": 1,
		"event": map[string]any{"type": "app_mention", "user": "U1", "text": "<@" + slackfake.BotUserID + "> hello", "ts": "1.000200", "channel": "C1", "channel_type": "channel"},
	})
	req, _ := http.NewRequest("POST", sa.base+"/slack/events", bytes.NewReader(body))
	ts := strconv.FormatInt(sa.clock.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slackhook.HeaderTimestamp, ts)
	req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, ts, body))
	for _, r := range []*http.Request{req, mustRequest(t, "GET", sa.base+"/healthz")} {
		began := time.Now()
		resp, err := client.Do(r)
		took := time.Since(began)
		if err != nil {
			t.Fatalf("%s under %d busy connections: %v after %s", r.URL.Path, flood, err, took)
		}
		resp.Body.Close()
		t.Logf("%s answered %d in %s under %d busy connections (issue's floor: 1 s)", r.URL.Path, resp.StatusCode, took, flood)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", r.URL.Path, resp.StatusCode)
		}
		if took > 3*time.Second {
			t.Errorf("%s took %s: Slack gives up after 3 s", r.URL.Path, took)
		}
	}
	// Another API request is refused at once, not queued behind the flood.
	resp, err := client.Post(sa.base+"/v1/sessions", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("an API request past the general capacity: %d; want 503 with Retry-After", resp.StatusCode)
	}
}
