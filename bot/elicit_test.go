package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// mrtrPeer is a 2026-07-28 MCP server whose one tool asks which seat
// with a multi round-trip request; it records each tools/call's params.
type mrtrPeer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []map[string]json.RawMessage
}

func newMRTRPeer(t *testing.T) *mrtrPeer {
	t.Helper()
	p := &mrtrPeer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			result = map[string]any{"tools": []any{map[string]any{"name": "book", "description": "Book a seat",
				"inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnlyHint": true}}}}
		case "tools/call":
			p.mu.Lock()
			p.calls = append(p.calls, req.Params)
			p.mu.Unlock()
			if req.Params["inputResponses"] == nil {
				result = map[string]any{"resultType": "input_required", "requestState": "st-1",
					"inputRequests": map[string]any{"seat": map[string]any{"method": "elicitation/create", "params": map[string]any{
						"message": "Which seat?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
							"seat": map[string]any{"type": "string", "enum": []string{"aisle", "window"}}}},
					}}}}
			} else {
				result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "booked " + string(req.Params["inputResponses"])}}}
			}
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *mrtrPeer) recorded() []map[string]json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), p.calls...)
}

// A server's request for input reaches the Slack thread as question
// buttons; the click sends the call again with the choice, once.
func TestSlack_MCPElicitationAnsweredByButton(t *testing.T) {
	peer := newMRTRPeer(t)
	sa := newSlackAppAgent(t, "    tools: [ask, travel]\n", fmt.Sprintf(`mcp_servers:
  - id: travel
    url: %s/mcp
    protocol: "2026-07-28"
`, peer.URL))
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "travel__book", Input: `{}`}),
		fakemodel.Text("Your seat is booked."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> book me a seat", "")
	q := sa.waitThread(ts, "Which seat?")
	for _, want := range []string{"aisle", "window", "Decline", "Cancel"} {
		if !strings.Contains(string(q.Blocks), want) {
			t.Fatalf("question lacks %s: %s", want, q.Blocks)
		}
	}
	sa.click("U1", q, "brain_answer") // the first button: aisle
	sa.waitThread(ts, "Your seat is booked.")
	got, _ := sa.waitTurns(sa.session(ts).ID, 2)
	if got.Status != engine.StatusIdle {
		t.Fatalf("status %s", got.Status)
	}
	calls := peer.recorded()
	if len(calls) != 2 {
		t.Fatalf("tools/call sent %d times, want 2", len(calls))
	}
	if string(calls[1]["requestState"]) != `"st-1"` || !strings.Contains(string(calls[1]["inputResponses"]), `"seat":"aisle"`) {
		t.Fatalf("re-sent call %s %s", calls[1]["requestState"], calls[1]["inputResponses"])
	}
	if m := sa.metricsText(); !strings.Contains(m, `brain_mcp_elicitations_total{server="travel"} 1`) {
		t.Fatalf("metrics: %s", m)
	}
}
