package mcp_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"brain/tools"
	brainmcp "brain/tools/mcp"
)

func TestBridge_HTTPCatalog(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	b, _ := connect(t, []brainmcp.ServerConfig{hp.config("peer")})

	want := []string{"peer__list_resources", "peer__read_resource", "peer__greet", "peer__fail", "peer__broken",
		"peer__block", "peer__leak", "peer__structured", "peer__image", "peer__progress", "peer__pick"}
	for _, n := range want {
		if !has(b, n) {
			t.Errorf("catalog %v lacks %s", names(b), n)
		}
	}
	if _, err := tools.NewSet(b.Tools()...); err != nil {
		t.Fatalf("the engine rejects the catalog: %v", err)
	}
	pick := find(t, b, "peer__pick")
	if !strings.Contains(string(pick.Input), `"anyOf"`) {
		t.Errorf("the raw schema lost anyOf: %s", pick.Input)
	}
	if err := pick.ValidateInput(json.RawMessage(`{}`)); err == nil {
		t.Error("the kept schema should reject {} (anyOf a or b)")
	}
	if d := find(t, b, "peer__greet").Description; d != "Greets someone" {
		t.Errorf("description = %q", d)
	}
}

func TestBridge_HTTPResults(t *testing.T) {
	srv, p := newPeer()
	hp := newHTTPPeer(t, srv)
	b, _ := connect(t, []brainmcp.ServerConfig{hp.config("peer")})
	ctx := context.Background()

	out, te := run(t, ctx, b, "peer__greet", `{"name":"Ann"}`)
	if te != nil || content(t, out) != "hello Ann" {
		t.Errorf("greet: %s, %v", out, te)
	}

	out, te = run(t, ctx, b, "peer__structured", `{}`)
	if te != nil || string(out) != `{"content":"sum is 5","structuredContent":{"sum":5}}` {
		t.Errorf("structured: %s, %v", out, te)
	}

	out, te = run(t, ctx, b, "peer__image", `{}`)
	if te != nil || content(t, out) != "look\n[image: image/png]" {
		t.Errorf("image: %s, %v", out, te)
	}

	// A tool-reported error reached the server: a known failure.
	_, te = run(t, ctx, b, "peer__fail", `{}`)
	if te == nil || te.UnknownOutcome || !strings.Contains(te.Message, "quota exceeded") {
		t.Errorf("fail: %+v", te)
	}

	// A handler's Go error is a JSON-RPC error: the server answered, and its
	// text reaches the model.
	_, te = run(t, ctx, b, "peer__broken", `{}`)
	if te == nil || te.UnknownOutcome || !strings.Contains(te.Message, "database is locked") {
		t.Errorf("broken: %+v", te)
	}

	// The secret the server echoes is redacted in text and structured content.
	out, te = run(t, ctx, b, "peer__leak", `{}`)
	if te != nil || !strings.Contains(string(out), "[REDACTED]") {
		t.Errorf("leak: %s, %v", out, te)
	}

	// A timeout after the request was sent: the outcome is unknown, and the
	// server is told to stop.
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, te = run(t, tctx, b, "peer__block", `{}`)
	if te == nil || !te.UnknownOutcome || !strings.Contains(te.Message, "timed out") {
		t.Errorf("block: %+v", te)
	}
	select {
	case <-p.cancelled:
	case <-time.After(5 * time.Second):
		t.Error("the server's handler was never cancelled")
	}

	// A context that ended before the call: nothing is sent.
	dead, cancelDead := context.WithCancel(ctx)
	cancelDead()
	_, te = run(t, dead, b, "peer__greet", `{"name":"Ann"}`)
	if te == nil || te.UnknownOutcome {
		t.Errorf("cancelled before dispatch: %+v", te)
	}
}

func TestBridge_HTTPProgress(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	b, _ := connect(t, []brainmcp.ServerConfig{hp.config("peer")})
	var mu sync.Mutex
	var got []string
	call := tools.Call{Input: json.RawMessage(`{}`), Progress: func(_ context.Context, data json.RawMessage) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(data))
		return nil
	}}
	out, err := find(t, b, "peer__progress").Run(context.Background(), call)
	if err != nil || content(t, out) != "done" {
		t.Fatalf("progress: %s, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// mcp-go's HTTP server may send a notification on its GET stream,
	// after the result: such late progress is dropped. The stdio test with
	// server-everything checks that every step arrives.
	for _, g := range got {
		if g != `{"progress":1,"total":2}` && g != `{"progress":2,"total":2}` {
			t.Errorf("progress forwarded: %s", g)
		}
	}
}

func TestBridge_HTTPResources(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	b, _ := connect(t, []brainmcp.ServerConfig{hp.config("peer")})
	ctx := context.Background()

	out, te := run(t, ctx, b, "peer__list_resources", `{}`)
	if te != nil || !strings.Contains(string(out), `"uri":"docs://readme"`) {
		t.Errorf("list_resources: %s, %v", out, te)
	}
	out, te = run(t, ctx, b, "peer__read_resource", `{"uri":"docs://readme"}`)
	if te != nil || string(out) != `{"contents":[{"uri":"docs://readme","mimeType":"text/plain","text":"read me first"}]}` {
		t.Errorf("read_resource: %s, %v", out, te)
	}
	_, te = run(t, ctx, b, "peer__read_resource", `{"uri":"docs://missing"}`)
	if te == nil || te.UnknownOutcome {
		t.Errorf("reading a missing resource: %+v", te)
	}
}

// List changes arrive on the GET stream at 2025-11-25 and on the
// subscriptions/listen stream at 2026-07-28 (negotiated: mcp-go's server
// speaks it).
func TestBridge_HTTPListChanged(t *testing.T) {
	for _, protocol := range []string{brainmcp.ProtocolLegacy, ""} {
		t.Run("protocol="+protocol, func(t *testing.T) { testHTTPListChanged(t, protocol) })
	}
}

func testHTTPListChanged(t *testing.T, protocol string) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	cfg := hp.config("peer")
	cfg.Protocol = protocol
	b, _ := connect(t, []brainmcp.ServerConfig{cfg}, brainmcp.WithRefreshInterval(0))
	var changes atomic.Int32
	b.OnChange(func() { changes.Add(1) })

	srv.AddTool(mcp.NewTool("late", mcp.WithDescription("Added at runtime")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("late"), nil })
	eventually(t, "the added tool is offered", func() bool { return has(b, "peer__late") })
	eventually(t, "OnChange is called", func() bool { return changes.Load() > 0 })
	if out, te := run(t, context.Background(), b, "peer__late", `{}`); te != nil || content(t, out) != "late" {
		t.Errorf("late: %s, %v", out, te)
	}

	srv.DeleteTools("late")
	eventually(t, "the deleted tool is withdrawn", func() bool { return !has(b, "peer__late") })
}

// At 2025-11-25 a restarted server forgets the session (2026-07-28 has none).
func TestBridge_HTTPServerRestart(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	cfg := hp.config("peer")
	cfg.Protocol = brainmcp.ProtocolLegacy
	b, _ := connect(t, []brainmcp.ServerConfig{cfg}, brainmcp.WithRefreshInterval(0))
	var changes atomic.Int32
	b.OnChange(func() { changes.Add(1) })

	// The new server does not know the session: it answers 404, so the
	// call was refused (known outcome) and the bridge reconnects.
	fresh, _ := newPeer()
	fresh.AddTool(mcp.NewTool("v2", mcp.WithDescription("Only on the new server")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("v2"), nil })
	hp.Swap(fresh)
	_, te := run(t, context.Background(), b, "peer__greet", `{"name":"Ann"}`)
	if te == nil || te.UnknownOutcome {
		t.Fatalf("call on a forgotten session: %+v", te)
	}
	eventually(t, "the bridge reconnects", func() bool { return has(b, "peer__v2") })
	if changes.Load() == 0 {
		t.Error("OnChange was not called")
	}
	if out, te := run(t, context.Background(), b, "peer__greet", `{"name":"Bo"}`); te != nil || content(t, out) != "hello Bo" {
		t.Errorf("greet after reconnect: %s, %v", out, te)
	}
}

func TestBridge_HTTPServerGone(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	b, _ := connect(t, []brainmcp.ServerConfig{hp.config("peer")}, brainmcp.WithRefreshInterval(0))
	hp.CloseClientConnections()
	hp.Close()
	// Nothing listens any more. A request written on a pooled connection
	// the server had closed may have been read: unknown. Once the pool is
	// empty, no connection is made, so nothing was sent.
	for i := 0; ; i++ {
		_, te := run(t, context.Background(), b, "peer__greet", `{"name":"Ann"}`)
		if te == nil {
			t.Fatal("a call to a closed server succeeded")
		}
		if !te.UnknownOutcome {
			if !strings.Contains(te.Message, "nothing was sent") {
				t.Errorf("message %q", te.Message)
			}
			break
		}
		if i == 5 {
			t.Fatalf("still unknown after %d calls: %s", i+1, te.Message)
		}
	}
}

func TestBridge_FailedServersAreSkipped(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	noauth := hp.config("noauth")
	noauth.BearerToken = "wrong-token-123"
	servers := []brainmcp.ServerConfig{
		{ID: "bad", Transport: brainmcp.TransportStdio, Command: "no-such-mcp-server-binary"},
		noauth,
		{ID: "bad id!", Transport: brainmcp.TransportStdio, Command: "true"},
		hp.config("good"),
	}
	start := time.Now()
	b, log := connect(t, servers)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("connecting took %v", d)
	}
	for _, n := range names(b) {
		if !strings.HasPrefix(n, "good__") {
			t.Errorf("tool %s from a server that failed", n)
		}
	}
	if !has(b, "good__greet") {
		t.Fatalf("the good server's tools are missing: %v", names(b))
	}
	for _, id := range []string{"mcp_server=bad ", "mcp_server=noauth ", `mcp_server="bad id!"`} {
		if !strings.Contains(log.String(), id) {
			t.Errorf("the log does not name %s:\n%s", id, log)
		}
	}
	if !strings.Contains(log.String(), "401") || strings.Contains(log.String(), "wrong-token-123") {
		t.Errorf("the log should say 401 without the token:\n%s", log)
	}
	if out, te := run(t, context.Background(), b, "good__greet", `{"name":"Ann"}`); te != nil || content(t, out) != "hello Ann" {
		t.Errorf("greet: %s, %v", out, te)
	}
}

func TestBridge_CallAfterClose(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	b, _ := connect(t, []brainmcp.ServerConfig{hp.config("peer")})
	greet := find(t, b, "peer__greet")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b.Close() // twice is fine
	_, err := greet.Run(context.Background(), tools.Call{Input: json.RawMessage(`{"name":"Ann"}`)})
	te, ok := err.(*tools.Error)
	if !ok || te.UnknownOutcome {
		t.Errorf("call after Close: %v", err)
	}
	if len(b.Tools()) != 0 {
		t.Errorf("catalog after Close: %v", names(b))
	}
}

func TestBridge_NoServers(t *testing.T) {
	b, _ := connect(t, nil)
	if len(b.Tools()) != 0 {
		t.Error("an empty config offers tools")
	}
}

func TestBridge_NoGoroutineLeak(t *testing.T) {
	srv, _ := newPeer()
	hp := newHTTPPeer(t, srv)
	stdio := goPeer(t, "go", nil)
	before := runtime.NumGoroutine()

	log, _ := newLog()
	b := brainmcp.Connect(context.Background(), []brainmcp.ServerConfig{hp.config("peer"), stdio}, log)
	ctx := context.Background()
	for _, name := range []string{"peer__greet", "go__greet"} {
		if _, err := find(t, b, name).Run(ctx, tools.Call{Input: json.RawMessage(`{"name":"x"}`)}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, _ = find(t, b, "peer__block").Run(tctx, tools.Call{Input: json.RawMessage(`{}`)})
	b.Close()

	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
