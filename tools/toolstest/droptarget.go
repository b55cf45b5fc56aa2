// Package toolstest holds helpers for testing tool families: servers that
// record what reached them, servers that fail the way real ones do, so a
// test can show a tool call reaches its target at most once, and checks of
// the tool errors a call returns. It is imported only by tests and imports
// only brain/tools of the project.
package toolstest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Response is one answer a DropTarget writes.
type Response struct {
	Status int         // 200 when zero
	Header http.Header // Content-Length is added
	Body   string      // not written to a HEAD request
}

// JSON is a 200 answer with body as application/json.
func JSON(body string) Response {
	return Response{Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
}

// A Reply answers one request a DropTarget has read in full (body is its
// body), or returns false to have the target drop the connection instead.
type Reply func(req *http.Request, body []byte) (Response, bool)

// Request is one request a DropTarget read.
type Request struct {
	Method string
	Body   []byte
}

// DropTarget is a raw HTTP/1.1 service that answers the first requests of
// each connection with keep-alive; the next one it reads in full and then
// closes the connection without a word, as a server does that dies or
// times the connection out just as a request arrives. A plain
// http.Transport sends a replayable request again on a new connection when
// that happens, so the target sees it twice; it records every request that
// reached it.
type DropTarget struct {
	ln       net.Listener
	answered int
	reply    Reply

	mu    sync.Mutex
	conns []net.Conn
	seen  []Request
}

// NewDropTarget starts a target on a loopback port that answers the first
// answered requests of each connection with reply (nil answers each with
// JSON(`{"ok":true}`)) and drops the next. It stops when the test ends.
func NewDropTarget(t *testing.T, answered int, reply Reply) *DropTarget {
	t.Helper()
	if reply == nil {
		reply = func(*http.Request, []byte) (Response, bool) { return JSON(`{"ok":true}`), true }
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DropTarget{ln: ln, answered: answered, reply: reply}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.mu.Lock()
			d.conns = append(d.conns, c)
			d.mu.Unlock()
			wg.Go(func() { d.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		d.mu.Lock()
		for _, c := range d.conns {
			c.Close()
		}
		d.mu.Unlock()
		wg.Wait()
	})
	return d
}

// URL is the target's base URL, with no path.
func (d *DropTarget) URL() string { return "http://" + d.ln.Addr().String() }

// Requests are the requests that reached the target so far, answered or
// not, in the order it read them.
func (d *DropTarget) Requests() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Request(nil), d.seen...)
}

func (d *DropTarget) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		d.mu.Lock()
		d.seen = append(d.seen, Request{Method: req.Method, Body: body})
		d.mu.Unlock()
		if n >= d.answered {
			return
		}
		resp, ok := d.reply(req, body)
		if !ok {
			return
		}
		if _, err := c.Write(resp.bytes(req.Method)); err != nil {
			return
		}
	}
}

// bytes is the whole HTTP/1.1 response to a request with the given method.
func (r Response) bytes(method string) []byte {
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	_ = r.Header.Write(&b)
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(r.Body))
	if method != http.MethodHead {
		b.WriteString(r.Body)
	}
	return b.Bytes()
}
