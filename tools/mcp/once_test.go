package mcp_test

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
	"time"

	brainmcp "brain/tools/mcp"
)

// rawMCP is a streamable HTTP MCP server written by hand on a raw TCP
// listener, so the test decides what happens to each connection: it
// answers the first request of a connection with keep-alive and, on the
// next one, reads the request in full and closes the connection without a
// word. With dropCalls it does that to every tools/call, wherever it comes.
// It counts the tools/call requests that reached it.
type rawMCP struct {
	ln        net.Listener
	dropCalls bool
	calls     atomic.Int64
	mu        sync.Mutex
	conns     []net.Conn
}

func newRawMCP(t *testing.T, dropCalls bool) *rawMCP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &rawMCP{ln: ln, dropCalls: dropCalls}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			m.mu.Lock()
			m.conns = append(m.conns, c)
			m.mu.Unlock()
			wg.Go(func() { m.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		m.mu.Lock()
		for _, c := range m.conns {
			c.Close()
		}
		m.mu.Unlock()
		wg.Wait()
	})
	return m
}

func (m *rawMCP) config() brainmcp.ServerConfig {
	return brainmcp.ServerConfig{ID: "raw", Transport: brainmcp.TransportHTTP, URL: "http://" + m.ln.Addr().String() + "/mcp", BearerToken: token}
}

func (m *rawMCP) serve(c net.Conn) {
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
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method == "tools/call" {
			m.calls.Add(1)
		}
		if n > 0 || (m.dropCalls && msg.Method == "tools/call") {
			return
		}
		if _, err := io.WriteString(c, answer(req.Method, msg.Method, msg.ID)); err != nil {
			return
		}
	}
}

// answer is the whole HTTP response to one request.
func answer(httpMethod, method string, id json.RawMessage) string {
	response := func(status, header, body string) string {
		return fmt.Sprintf("HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s", status, header, len(body), body)
	}
	result := func(v string) string {
		return response("200 OK", "Content-Type: application/json\r\nMcp-Session-Id: raw-session\r\n",
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, v))
	}
	switch {
	case httpMethod == http.MethodGet:
		return response("405 Method Not Allowed", "", "") // no server-sent stream
	case httpMethod != http.MethodPost:
		return response("200 OK", "", "")
	case len(id) == 0:
		return response("202 Accepted", "", "") // a notification
	case method == "initialize":
		return result(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
	case method == "tools/list":
		return result(`{"tools":[{"name":"write","description":"Write a thing","inputSchema":{"type":"object"}}]}`)
	case method == "tools/call":
		return result(`{"content":[{"type":"text","text":"written"}]}`)
	}
	return response("200 OK", "Content-Type: application/json\r\n",
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id))
}

// TestHTTP_AtMostOnce connects to a server that drops the second request of
// every connection, then calls a tool twice: each call reaches the server
// exactly once and succeeds. A tools/call whose connection is dropped after
// the write reaches the server once and has an unknown outcome.
func TestHTTP_AtMostOnce(t *testing.T) {
	opts := []brainmcp.Option{brainmcp.WithConnectTimeout(5 * time.Second), brainmcp.WithRefreshInterval(0)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	srv := newRawMCP(t, false)
	b, _ := connect(t, []brainmcp.ServerConfig{srv.config()}, opts...)
	if !has(b, "raw__write") {
		t.Fatalf("no raw__write among %v: connecting failed", names(b))
	}
	for i := range 2 {
		out, te := run(t, ctx, b, "raw__write", `{"path":"a"}`)
		if te != nil {
			t.Fatalf("call %d: %s", i+1, te.Message)
		}
		if got := content(t, out); got != "written" {
			t.Errorf("call %d: content %q", i+1, got)
		}
	}
	if got := srv.calls.Load(); got != 2 {
		t.Fatalf("server saw %d tools/call requests for 2 calls, want 2", got)
	}

	dropping := newRawMCP(t, true)
	b, _ = connect(t, []brainmcp.ServerConfig{dropping.config()}, opts...)
	_, te := run(t, ctx, b, "raw__write", `{"path":"a"}`)
	if te == nil || !te.UnknownOutcome {
		t.Fatalf("a dropped call: error %+v, want an unknown outcome", te)
	}
	if got := dropping.calls.Load(); got != 1 {
		t.Fatalf("server saw %d tools/call requests for 1 call, want 1", got)
	}
}
