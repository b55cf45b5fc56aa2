package schedule

import (
	"encoding/json"
	"testing"

	"brain/engine"
	"brain/engine/durable"
)

func TestSummarize(t *testing.T) {
	ev := func(typ, data string) engine.Event { return engine.Event{Type: typ, Data: json.RawMessage(data)} }
	done := ev(engine.EventTurnCompleted, `{"outcome":"completed"}`)
	idle := engine.Session{Status: engine.StatusIdle}
	withResult := idle
	withResult.Result = json.RawMessage(`{"turn_id":"t","data":{"ok":true}}`)
	cases := []struct {
		name            string
		sess            engine.Session
		evs             []engine.Event
		status, outcome string
	}{
		{"final message", idle, []engine.Event{ev(engine.EventAgentMessage, `{"text":"first"}`), ev(engine.EventAgentMessage, `{"text":"last"}`), done}, durable.RunCompleted, "last"},
		{"result without message", withResult, []engine.Event{done}, durable.RunCompleted, `{"ok":true}`},
		{"nothing said", idle, []engine.Event{done}, durable.RunCompleted, "(the agent finished without a message)"},
		{"max iterations is done", idle, []engine.Event{ev(engine.EventAgentMessage, `{"text":"partial"}`), ev(engine.EventTurnCompleted, `{"outcome":"max_iterations"}`)}, durable.RunCompleted, "partial"},
		{"failed", engine.Session{Status: engine.StatusFailed}, []engine.Event{ev(engine.EventAgentMessage, `{"text":"hm"}`), ev(engine.EventSessionError, `{"message":"invalid api key"}`)}, durable.RunFailed, "invalid api key"},
		{"interrupted", engine.Session{Status: engine.StatusInterrupted}, nil, durable.RunInterrupted, "the run stopped with status interrupted"},
		{"cancelled turn", idle, []engine.Event{ev(engine.EventTurnCompleted, `{"outcome":"cancelled"}`)}, durable.RunInterrupted, "the run was cancelled before it finished"},
		{"cancelled before it ran", idle, nil, durable.RunInterrupted, "the run was cancelled before it finished"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, outcome := summarize(c.sess, c.evs)
			if status != c.status || outcome != c.outcome {
				t.Fatalf("summarize = %s %q, want %s %q", status, outcome, c.status, c.outcome)
			}
		})
	}
}
