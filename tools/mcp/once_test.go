package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	brainmcp "brain/tools/mcp"
	"brain/tools/toolstest"
)

// rawMCP is a streamable HTTP MCP server on a drop target, so the test
// decides what happens to each connection: it answers the first request of
// a connection with keep-alive and drops the next. With dropCalls it drops
// every tools/call too, wherever it comes.
type rawMCP struct{ *toolstest.DropTarget }

func newRawMCP(t *testing.T, dropCalls bool) rawMCP {
	t.Helper()
	return rawMCP{toolstest.NewDropTarget(t, 1, func(req *http.Request, body []byte) (toolstest.Response, bool) {
		msg := parse(body)
		if dropCalls && msg.Method == "tools/call" {
			return toolstest.Response{}, false
		}
		return answer(req.Method, msg.Method, msg.ID), true
	})}
}

func (m rawMCP) config() brainmcp.ServerConfig {
	return brainmcp.ServerConfig{ID: "raw", Transport: brainmcp.TransportHTTP, URL: m.URL() + "/mcp", BearerToken: token}
}

// calls counts the tools/call requests that reached the server.
func (m rawMCP) calls() int {
	n := 0
	for _, r := range m.Requests() {
		if parse(r.Body).Method == "tools/call" {
			n++
		}
	}
	return n
}

// message is the part of a JSON-RPC message the server looks at.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func parse(body []byte) message {
	var msg message
	_ = json.Unmarshal(body, &msg)
	return msg
}

// answer is the response to one request.
func answer(httpMethod, method string, id json.RawMessage) toolstest.Response {
	result := func(v string) toolstest.Response {
		return toolstest.Response{
			Header: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"raw-session"}},
			Body:   fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, v),
		}
	}
	switch {
	case httpMethod == http.MethodGet:
		return toolstest.Response{Status: http.StatusMethodNotAllowed} // no server-sent stream
	case httpMethod != http.MethodPost:
		return toolstest.Response{}
	case len(id) == 0:
		return toolstest.Response{Status: http.StatusAccepted} // a notification
	case method == "initialize":
		return result(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
	case method == "tools/list":
		return result(`{"tools":[{"name":"write","description":"Write a thing","inputSchema":{"type":"object"}}]}`)
	case method == "tools/call":
		return result(`{"content":[{"type":"text","text":"written"}]}`)
	}
	return toolstest.JSON(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id))
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
	if got := srv.calls(); got != 2 {
		t.Fatalf("server saw %d tools/call requests for 2 calls, want 2", got)
	}

	dropping := newRawMCP(t, true)
	b, _ = connect(t, []brainmcp.ServerConfig{dropping.config()}, opts...)
	_, te := run(t, ctx, b, "raw__write", `{"path":"a"}`)
	if te == nil || !te.UnknownOutcome {
		t.Fatalf("a dropped call: error %+v, want an unknown outcome", te)
	}
	if got := dropping.calls(); got != 1 {
		t.Fatalf("server saw %d tools/call requests for 1 call, want 1", got)
	}
}
