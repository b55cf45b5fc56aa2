package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"brain/tools"
	"brain/tools/web"
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
		// An answer both web_fetch and a search provider read.
		body := `{"results":[{"title":"Result","url":"https://example.org/","content":"text"}]}`
		head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		if _, err := io.WriteString(c, head+body); err != nil {
			return
		}
	}
}

func (d *dropTarget) url() string { return "http://" + d.ln.Addr().String() }

// TestDispatch_AtMostOnce calls each web tool twice against a target that
// drops the second request of a connection: the target sees each call
// exactly once and both succeed. A call whose connection is dropped after
// the write reaches the target once and has an unknown outcome.
func TestDispatch_AtMostOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		tool  func(url string) (tools.Definition, error)
	}{
		{"web_fetch", `{"url":"URL/page"}`, func(url string) (tools.Definition, error) {
			return web.Fetch(web.FetchConfig{AllowPrivate: true})
		}},
		{"web_search GET (searxng)", `{"query":"go"}`, func(url string) (tools.Definition, error) {
			return web.Search(web.SearchConfig{Provider: "searxng", Endpoint: url})
		}},
		{"web_search POST (tavily)", `{"query":"go"}`, func(url string) (tools.Definition, error) {
			return web.Search(web.SearchConfig{Provider: "tavily", APIKey: key, Endpoint: url})
		}},
		{"web_search, given client", `{"query":"go"}`, func(url string) (tools.Definition, error) {
			return web.Search(web.SearchConfig{Provider: "searxng", Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}})
		}},
	} {
		// One tool, so its client (and any connection it keeps) serves
		// every call.
		compile := func(t *testing.T, d *dropTarget) (*tools.Tool, tools.Call) {
			t.Helper()
			def, err := tc.tool(d.url())
			if err != nil {
				t.Fatal(err)
			}
			tool, err := tools.Compile(def)
			if err != nil {
				t.Fatal(err)
			}
			in := json.RawMessage(strings.ReplaceAll(tc.input, "URL", d.url()))
			return tool, tools.Call{Input: in, SessionID: "s", ToolCallID: "c"}
		}
		t.Run(tc.name, func(t *testing.T) {
			target := newDropTarget(t, 1)
			tool, call := compile(t, target)
			for i := range 2 {
				if _, err := tool.Run(context.Background(), call); err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
			if got := target.seen.Load(); got != 2 {
				t.Fatalf("target saw %d requests for 2 calls, want 2", got)
			}

			dropping := newDropTarget(t, 0)
			tool, call = compile(t, dropping)
			_, err := tool.Run(context.Background(), call)
			toolErr(t, err, true)
			if got := dropping.seen.Load(); got != 1 {
				t.Fatalf("target saw %d requests for 1 call, want 1", got)
			}
		})
	}
}
