package httptool_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"brain/tools"
	"brain/tools/httptool"
)

// dropTarget is a raw HTTP/1.1 service that answers the first answered
// requests of each connection with keep-alive; the next one it reads in
// full and then closes the connection without a word. It counts every
// request that reached it.
type dropTarget struct {
	ln       net.Listener
	answered int
	seen     atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

func newDropTarget(t *testing.T, answered int) *dropTarget {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dropTarget{ln: ln, answered: answered}
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

func (d *dropTarget) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		d.seen.Add(1)
		if n >= d.answered {
			return
		}
		body := `{"ok":true}`
		head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		if req.Method == http.MethodHead {
			body = ""
		}
		if _, err := io.WriteString(c, head+body); err != nil {
			return
		}
	}
}

// TestDispatch_AtMostOnce calls each method's tool twice, as run and as an
// approved apply, against a target that drops the second request of a
// connection: the target sees each call exactly once and both succeed. A
// call whose connection is dropped after the write reaches the target once
// and has an unknown outcome.
func TestDispatch_AtMostOnce(t *testing.T) {
	send := func(tool *tools.Tool, i int) (json.RawMessage, error) {
		c := tools.Call{Input: json.RawMessage(`{"title":"Printer on fire"}`), SessionID: "sess-1", ToolCallID: fmt.Sprint("call-", i)}
		if tool.NeedsApproval() {
			return tool.Apply(context.Background(), c, tools.Decision{ID: fmt.Sprint("apr-", i), By: "ann"})
		}
		return tool.Run(context.Background(), c)
	}
	for _, method := range []string{"GET", "HEAD", "DELETE", "PUT", "POST", "PATCH", "OPTIONS"} {
		for _, mode := range []string{"run", "apply"} {
			for _, cl := range []struct {
				name   string
				client func() *http.Client
			}{
				{"own client", func() *http.Client { return nil }},
				{"given client", func() *http.Client { return &http.Client{Transport: &http.Transport{}} }},
			} {
				t.Run(method+" "+mode+" "+cl.name, func(t *testing.T) {
					spec := func(url string) httptool.Spec {
						s := ticketSpec(url + "/api/tickets")
						s.Method = method
						if mode == "apply" {
							s.Approval = &httptool.Approval{Title: "Create ticket {{.title}}"}
						}
						return s
					}
					target := newDropTarget(t, 1)
					tool := compile(t, spec("http://"+target.ln.Addr().String()), cl.client())
					for i := range 2 {
						if _, err := send(tool, i); err != nil {
							t.Fatalf("call %d: %v", i+1, err)
						}
					}
					if got := target.seen.Load(); got != 2 {
						t.Fatalf("target saw %d requests for 2 calls, want 2", got)
					}

					dropping := newDropTarget(t, 0)
					tool = compile(t, spec("http://"+dropping.ln.Addr().String()), cl.client())
					_, err := send(tool, 0)
					toolError(t, err, true)
					if got := dropping.seen.Load(); got != 1 {
						t.Fatalf("target saw %d requests for 1 call, want 1", got)
					}
				})
			}
		}
	}
}
