package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/tools"
	brainmcp "brain/tools/mcp"
)

// mrtrServer is a 2026-07-28 server whose tool asks for input with a
// multi round-trip request: the first tools/call answers input_required
// with a request state; a call with inputResponses completes. It records
// the params of every tools/call.
type mrtrServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []map[string]json.RawMessage
}

const mrtrState = `"opaque-state-Ω"`

func newMRTRServer(t testing.TB) *mrtrServer {
	t.Helper()
	ms := &mrtrServer{}
	ms.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage            `json:"id"`
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		var result any
		switch req.Method {
		case "server/discover":
			result = map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "mrtr", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "book", "description": "Book a seat",
				"inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			ms.mu.Lock()
			ms.calls = append(ms.calls, req.Params)
			ms.mu.Unlock()
			if req.Params["inputResponses"] == nil {
				result = map[string]any{"resultType": "input_required", "requestState": json.RawMessage(mrtrState),
					"inputRequests": map[string]any{"seat": map[string]any{"method": "elicitation/create", "params": map[string]any{
						"message": "Which seat?",
						"requestedSchema": map[string]any{"type": "object", "required": []string{"seat"}, "properties": map[string]any{
							"seat": map[string]any{"type": "string", "enum": []string{"aisle", "window"}},
							"note": map[string]any{"type": "string", "default": "none"},
						}},
					}}}}
			} else {
				result = map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": string(req.Params["inputResponses"])}}}
			}
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(ms.Close)
	return ms
}

func (ms *mrtrServer) recorded() []map[string]json.RawMessage {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), ms.calls...)
}

func TestBridge_MultiRoundTripElicitation(t *testing.T) {
	ms := newMRTRServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := brainmcp.Connect(ctx, []brainmcp.ServerConfig{{ID: "travel", Transport: brainmcp.TransportHTTP, URL: ms.URL, Protocol: brainmcp.ProtocolStateless}}, nil)
	defer b.Close()
	defs := b.Tools()
	if len(defs) != 1 {
		t.Fatalf("tools %d", len(defs))
	}
	tool, err := tools.Compile(defs[0])
	if err != nil {
		t.Fatal(err)
	}
	call := tools.Call{Input: json.RawMessage(`{}`), SessionID: "s", ToolCallID: "c"}
	_, err = tool.Run(ctx, call)
	var ir *tools.InputRequired
	if !errors.As(err, &ir) {
		t.Fatalf("want InputRequired, got %v", err)
	}
	el := ir.Elicitation
	if el.Message != "Which seat?" || len(el.Fields) != 2 || el.Fields[0].Name != "seat" || !el.Fields[0].Required ||
		len(el.Fields[0].Choices) != 2 || el.Fields[1].Default != "none" {
		t.Fatalf("elicitation %+v", el)
	}
	if st := b.Stats()[0]; st.Elicitations != 1 || st.Errors != 0 {
		t.Fatalf("stats %+v", st)
	}

	// Sent again with the person's answer: the state comes back byte for
	// byte, the response carries the default the person left out.
	call.Resume = &tools.Resume{State: ir.State, Reply: tools.Reply{Action: tools.ActionAccept, Content: map[string]any{"seat": "window"}}}
	out, err := tool.Run(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	calls := ms.recorded()
	if len(calls) != 2 {
		t.Fatalf("tools/call %d times", len(calls))
	}
	if string(calls[1]["requestState"]) != mrtrState {
		t.Fatalf("request state %s, want %s", calls[1]["requestState"], mrtrState)
	}
	var responses map[string]struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(calls[1]["inputResponses"], &responses); err != nil {
		t.Fatal(err)
	}
	if r := responses["seat"]; r.Action != "accept" || r.Content["seat"] != "window" || r.Content["note"] != "none" {
		t.Fatalf("input responses %s", calls[1]["inputResponses"])
	}
	if !strings.Contains(string(out), "window") {
		t.Fatalf("result %s", out)
	}

	// A decline brain made says why, where the server can read it.
	call.Resume.Reply = tools.Reply{Action: tools.ActionDecline, Reason: "nobody can answer"}
	if _, err := tool.Run(ctx, call); err != nil {
		t.Fatal(err)
	}
	last := ms.recorded()[2]["inputResponses"]
	if !strings.Contains(string(last), `"action":"decline"`) || !strings.Contains(string(last), "nobody can answer") || strings.Contains(string(last), "content") {
		t.Fatalf("decline %s", last)
	}
}
