package mcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	brainmcp "brain/tools/mcp"
)

// legacyServer speaks only 2025-11-25 over streamable HTTP, the way an
// old server does; with ignoreDiscover it never answers server/discover
// (it holds the request until the client gives up) instead of answering
// "method not found". It records the methods and headers it saw.
type legacyServer struct {
	*httptest.Server
	mu      sync.Mutex
	methods []string
	headers map[string]http.Header // method -> headers of its last request
}

func newLegacyServer(t testing.TB, ignoreDiscover bool) *legacyServer {
	t.Helper()
	ls := &legacyServer{headers: map[string]http.Header{}}
	ls.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		ls.mu.Lock()
		ls.methods = append(ls.methods, req.Method)
		ls.headers[req.Method] = r.Header.Clone()
		ls.mu.Unlock()
		var result any
		switch req.Method {
		case "server/discover":
			if ignoreDiscover {
				<-r.Context().Done()
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32601, "message": "Method not found"}})
			return
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "legacy", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "echo", "description": "Echo",
				"inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "echoed"}}}
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(ls.Close)
	return ls
}

// A server pinned to 2026-07-28 in the config that speaks only 2025-11-25
// is reached by falling back to the initialize handshake: at once when it
// answers server/discover with an error, after the discover bound when it
// ignores it. The elapsed times are logged (go test -v) as the measured
// fallback cost; requests on the legacy connection carry no 2026 headers.
func TestBridge_ProtocolFallsBackToLegacy(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		name := "discover refused"
		if ignore {
			name = "discover ignored"
		}
		t.Run(name, func(t *testing.T) {
			ls := newLegacyServer(t, ignore)
			start := time.Now()
			b, _ := connect(t, []brainmcp.ServerConfig{{ID: "old", Transport: brainmcp.TransportHTTP, URL: ls.URL,
				Protocol: brainmcp.ProtocolStateless}}, brainmcp.WithRefreshInterval(0))
			t.Logf("connected in %v (%s)", time.Since(start), name)
			out, te := run(t, t.Context(), b, "old__echo", `{}`)
			if te != nil || content(t, out) != "echoed" {
				t.Fatalf("echo: %s, %v", out, te)
			}
			ls.mu.Lock()
			defer ls.mu.Unlock()
			if len(ls.methods) == 0 || ls.methods[0] != "server/discover" {
				t.Errorf("methods %v: want server/discover first", ls.methods)
			}
			if h := ls.headers["tools/call"]; h.Get("Mcp-Method") != "" || h.Get("Mcp-Protocol-Version") != "2025-11-25" {
				t.Errorf("tools/call on the legacy connection: Mcp-Method %q, Mcp-Protocol-Version %q",
					h.Get("Mcp-Method"), h.Get("Mcp-Protocol-Version"))
			}
		})
	}
}
