// Package mcptest is an MCP server of revision 2026-07-28 for tests: one
// tool, book, that asks for input with a multi round-trip request
// (resultType input_required, a requestState) and completes once the call
// comes back with the input's responses. It records every tools/call.
//
// Only tests import it.
package mcptest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Question is the input the book tool asks for: the key of its input
// request, the elicitation/create params (message, requestedSchema) and
// the requestState sent with it ("st-1" when empty).
type Question struct {
	Key    string
	Params map[string]any
	State  string
}

// Seat asks which seat, aisle or window (a choice).
func Seat() Question {
	return Question{Key: "seat", Params: map[string]any{
		"message": "Which seat?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"seat": map[string]any{"type": "string", "enum": []string{"aisle", "window"}}}},
	}}
}

// Seats asks how many seats (an integer, required) and for a note (text):
// a form.
func Seats() Question {
	return Question{Key: "seats", Params: map[string]any{
		"message": "How many seats?", "requestedSchema": map[string]any{"type": "object", "required": []string{"count"},
			"properties": map[string]any{
				"count": map[string]any{"type": "integer", "title": "Seats"},
				"note":  map[string]any{"type": "string"},
			}},
	}}
}

// Server is the running server; its URL (Server.URL + "/mcp") goes in
// mcp_servers.
type Server struct {
	*httptest.Server
	mu    sync.Mutex
	calls []map[string]json.RawMessage
}

// New starts a server named travel whose book tool asks q, closed when t
// ends. The completed call's text is "booked " and the responses.
func New(t testing.TB, q Question) *Server {
	t.Helper()
	s := &Server{}
	state := q.State
	if state == "" {
		state = "st-1"
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
				"serverInfo": map[string]any{"name": "travel", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "book", "description": "Book seats",
				"inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnlyHint": true}}}}
		case "tools/call":
			s.mu.Lock()
			s.calls = append(s.calls, req.Params)
			s.mu.Unlock()
			if req.Params["inputResponses"] == nil {
				result = map[string]any{"resultType": "input_required", "requestState": state,
					"inputRequests": map[string]any{q.Key: map[string]any{"method": "elicitation/create", "params": q.Params}}}
			} else {
				result = map[string]any{"resultType": "complete",
					"content": []any{map[string]any{"type": "text", "text": "booked " + string(req.Params["inputResponses"])}}}
			}
		default: // notifications
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(s.Close)
	return s
}

// Calls is the params of every tools/call, in order.
func (s *Server) Calls() []map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), s.calls...)
}

// Counts is how many calls came without input responses (the tool
// asked), and the input responses of the calls sent again, in order.
func (s *Server) Counts() (asked int, answers []string) {
	for _, c := range s.Calls() {
		if c["inputResponses"] == nil {
			asked++
		} else {
			answers = append(answers, string(c["inputResponses"]))
		}
	}
	return asked, answers
}
