package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"brain/tools"
	brainmcp "brain/tools/mcp"
	"brain/tools/mcp/mcptest"
)

const mrtrState = `"opaque-state-Ω"`

// newMRTRServer is the test peer whose book tool asks which seat (required)
// with a note (default "none"), under an opaque request state.
func newMRTRServer(t testing.TB) *mcptest.Server {
	t.Helper()
	return mcptest.New(t, mcptest.Question{Key: "seat", State: "opaque-state-Ω", Params: map[string]any{
		"message": "Which seat?",
		"requestedSchema": map[string]any{"type": "object", "required": []string{"seat"}, "properties": map[string]any{
			"seat": map[string]any{"type": "string", "enum": []string{"aisle", "window"}},
			"note": map[string]any{"type": "string", "default": "none"},
		}},
	}})
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
	calls := ms.Calls()
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
	last := ms.Calls()[2]["inputResponses"]
	if !strings.Contains(string(last), `"action":"decline"`) || !strings.Contains(string(last), "nobody can answer") || strings.Contains(string(last), "content") {
		t.Fatalf("decline %s", last)
	}
}
