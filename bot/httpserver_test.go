package bot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// patience only turns a hang into a failure; no test asserts a duration.
const patience = 10 * time.Second

// dial opens a raw connection to the app.
func (ta *testApp) dial() net.Conn {
	ta.t.Helper()
	c, err := net.Dial("tcp", ta.app.Addr())
	if err != nil {
		ta.t.Fatal(err)
	}
	ta.t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reads c until the server closes it; it fails the test if
// patience runs out first.
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(patience))
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server still holds the connection after %s", patience)
	}
	// nil is EOF; a reset (the server closed with unread input) is closed too.
}

func TestHTTPServer_SlowBodyIsCutOff(t *testing.T) {
	ta := newTestApp(t, "limits: {read_timeout: 300ms}\n", Options{})
	c := ta.dial()
	fmt.Fprintf(c, "POST /v1/sessions HTTP/1.1\r\nHost: brain\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a byte now and then: the body would take 100 s
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	closedByServer(t, c)
}

func TestHTTPServer_IdleKeepAliveIsClosed(t *testing.T) {
	ta := newTestApp(t, "limits: {idle_timeout: 300ms}\n", Options{})
	c := ta.dial()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: brain\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(patience))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("status %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	closedByServer(t, c)
}

func TestHTTPServer_EventStreamOutlivesTimeouts(t *testing.T) {
	ta := newTestApp(t, "limits: {read_timeout: 200ms, write_timeout: 200ms}\n", Options{})
	s := ta.createSession()
	req, _ := http.NewRequest("GET", ta.base+"/v1/sessions/"+s.ID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	time.Sleep(time.Second) // well past both timeouts
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "still there?"}, nil)
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(patience)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended before the message arrived")
			}
			if line == "event: user.message" {
				return
			}
		case <-deadline:
			t.Fatalf("no user.message on the stream after %s", patience)
		}
	}
}

// TestHTTPServer_ConnectionCapRefusesOthersKeepsTheReserve: with
// max_connections requests of the API busy (two event streams), a third
// API request is answered 503 at once instead of queueing, and /healthz,
// which keeps reserved capacity with the webhooks, is served.
func TestHTTPServer_ConnectionCapRefusesOthersKeepsTheReserve(t *testing.T) {
	ta := newTestApp(t, "limits: {max_connections: 2}\n", Options{})
	s := ta.createSession()
	request := func(line string) *http.Response {
		t.Helper()
		c := ta.dial()
		t.Cleanup(func() { c.Close() })
		_ = c.SetReadDeadline(time.Now().Add(patience))
		fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: brain\r\nAccept: text/event-stream\r\n\r\n", line)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return resp
	}
	for range 2 {
		if resp := request("GET /v1/sessions/" + s.ID + "/events"); resp.StatusCode != 200 {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
	}
	if resp := request("GET /v1/sessions/" + s.ID); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("a third API request while two are busy: %d; want 503 with Retry-After: 1", resp.StatusCode)
	}
	if resp := request("GET /healthz"); resp.StatusCode != 200 {
		t.Fatalf("/healthz while two API requests are busy: %d; want 200 (reserved)", resp.StatusCode)
	}
}

// TestHTTPServer_IdleConnectionsMakeRoom: at the cap, a connection idle
// between requests is closed for a new one.
func TestHTTPServer_IdleConnectionsMakeRoom(t *testing.T) {
	ta := newTestApp(t, "limits: {max_connections: 2}\n", Options{})
	get := func(c net.Conn) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(patience))
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: brain\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	first, second := ta.dial(), ta.dial()
	get(first)
	get(second)
	// Served (the old gate made it wait for one of the two to close): the
	// oldest idle connection, these two or the harness's, made room.
	get(ta.dial())
}
