package web

import (
	"encoding/json"
	"strings"
	"testing"

	"brain/engine"
	"brain/tools"
)

func TestTimelineItem(t *testing.T) {
	ev := func(p engine.Payload) engine.Event {
		e, err := engine.NewEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	raw := func(typ, data string) engine.Event { return engine.Event{Type: typ, Data: json.RawMessage(data)} }
	for _, tc := range []struct {
		ev          engine.Event
		kind, title string
		shown       bool
	}{
		{ev(engine.Input{Text: "hi", Author: "U1", Answer: &engine.Answer{QuestionID: "q", Value: "a"}}), "user", "U1 answered", true},
		{ev(engine.ApprovalRequested{ApprovalID: "apr1", Title: "Deploy", RequestedBy: "U1", Facts: []tools.Fact{{Label: "Env", Value: "prod"}}}), "approval", "approval requested: Deploy", true},
		{raw(engine.EventApprovalDecided, `{"approval_id":"apr1","by":"U1","decision":"deny","title":"Deploy","comment":"not on a Friday"}`), "approval", "U1 denied: Deploy", true},
		{ev(engine.ApplyFailed{ApprovalID: "apr1", Tool: "deploy", Error: "503"}), "approval", "apply failed: deploy", true},
		{ev(engine.TurnCompleted{Outcome: engine.OutcomeFailed, Code: "model_auth"}), "turn", "turn failed", true},
		{ev(engine.ToolProgress{CallID: "c", Name: "x"}), "", "", false},
		{raw("context.compacted", `{"summary":"earlier turns"}`), "note", "context compacted", true},
		{raw(engine.EventAgentMessage, `{"text":`), "error", "unreadable agent.message event", true},
	} {
		it, shown := timelineItem(tc.ev)
		if shown != tc.shown || (shown && (it.Kind != tc.kind || !strings.HasPrefix(it.Title, tc.title))) {
			t.Errorf("%s: %+v shown=%v; want kind %s title %q", tc.ev.Type, it, shown, tc.kind, tc.title)
		}
	}
	it, _ := timelineItem(raw(engine.EventApprovalDecided, `{"approval_id":"apr1","by":"U1","decision":"deny","comment":"not on a Friday"}`))
	if it.Markdown != "not on a Friday" {
		t.Errorf("the reason is not shown: %+v", it)
	}
}
