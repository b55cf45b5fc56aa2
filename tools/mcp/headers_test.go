package mcp_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	brainmcp "brain/tools/mcp"
)

// Tools whose x-mcp-header is invalid are not offered, and the log says
// which and why once, however often the tools are listed again; valid ones
// stay (the cases of the conformance scenario http-invalid-tool-headers).
func TestBridge_InvalidHeaderToolsDropped(t *testing.T) {
	schemas := map[string]string{
		"valid_tool":          `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`,
		"plain":               `{"type":"object","properties":{"q":{"type":"string"}}}`,
		"empty":               `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`,
		"object":              `{"type":"object","properties":{"d":{"type":"object","x-mcp-header":"Data"}}}`,
		"array":               `{"type":"object","properties":{"i":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`,
		"null":                `{"type":"object","properties":{"z":{"type":"null","x-mcp-header":"Nil"}}}`,
		"number":              `{"type":"object","properties":{"s":{"type":"number","x-mcp-header":"Score"}}}`,
		"duplicate_same_case": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}`,
		"duplicate_diff_case": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`,
		"space":               `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`,
		"colon":               `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`,
		"non_ascii":           `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`,
		"control":             `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region\t1"}}}`,
	}
	// mcp-go's server refuses such tools, so a bare JSON-RPC server lists them.
	var lists atomic.Int64
	rpc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "hdr", "version": "1"}}
		case "tools/list":
			lists.Add(1)
			var list []map[string]any
			for _, name := range slices.Sorted(maps.Keys(schemas)) {
				list = append(list, map[string]any{"name": name, "description": "tool " + name, "inputSchema": json.RawMessage(schemas[name])})
			}
			result = map[string]any{"tools": list}
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(rpc.Close)
	b, logs := connect(t, []brainmcp.ServerConfig{{ID: "hdr", Transport: brainmcp.TransportHTTP, URL: rpc.URL}},
		brainmcp.WithRefreshInterval(10*time.Millisecond))
	// Listed again by the refresh timer: nothing new is logged.
	eventually(t, "three listings", func() bool { return lists.Load() >= 3 })
	for name := range schemas {
		want := name == "valid_tool" || name == "plain"
		if has(b, "hdr__"+name) != want {
			t.Errorf("%s offered = %v, want %v", name, !want, want)
		}
		if !want && strings.Count(logs.String(), "tool="+name+" ") != 1 {
			t.Errorf("%s: want one log line saying why, log:\n%s", name, logs)
		}
	}
}
