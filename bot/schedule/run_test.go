package schedule

import (
	"encoding/json"
	"strings"
	"testing"

	"brain/engine"
	"brain/store"
)

func TestSummarize(t *testing.T) {
	done := engine.TurnCompleted{Outcome: engine.OutcomeCompleted}
	idle := engine.Session{Status: engine.StatusIdle}
	withResult := idle
	withResult.Result = json.RawMessage(`{"turn_id":"t","data":{"ok":true}}`)
	cases := []struct {
		name            string
		sess            engine.Session
		payloads        []engine.Payload
		status, outcome string
	}{
		{"final message", idle, []engine.Payload{engine.AgentMessage{Text: "first"}, engine.AgentMessage{Text: "last"}, done}, store.RunCompleted, "last"},
		{"result without message", withResult, []engine.Payload{done}, store.RunCompleted, `{"ok":true}`},
		{"nothing said", idle, []engine.Payload{done}, store.RunCompleted, "(the agent finished without a message)"},
		{"max iterations is done", idle, []engine.Payload{engine.AgentMessage{Text: "partial"}, engine.TurnCompleted{Outcome: engine.OutcomeMaxIterations}}, store.RunCompleted, "partial"},
		{"failed", engine.Session{Status: engine.StatusFailed}, []engine.Payload{engine.AgentMessage{Text: "hm"}, engine.SessionError{Message: "invalid api key"}}, store.RunFailed, "invalid api key"},
		{"interrupted", engine.Session{Status: engine.StatusInterrupted}, nil, store.RunInterrupted, "the run stopped with status interrupted"},
		{"cancelled turn", idle, []engine.Payload{engine.TurnCompleted{Outcome: engine.OutcomeCancelled}}, store.RunInterrupted, "the run was cancelled before it finished"},
		{"cancelled before it ran", idle, nil, store.RunInterrupted, "the run was cancelled before it finished"},
	}
	t.Run("unreadable result", func(t *testing.T) {
		sess := engine.Session{ID: "ses_1", Status: engine.StatusIdle, Result: json.RawMessage(`{"call_id":5}`)}
		status, outcome := summarize(sess, []engine.Payload{done})
		if status != store.RunCompleted || !strings.HasPrefix(outcome, "(the agent's result cannot be read: decode the result of session ses_1: ") {
			t.Fatalf("summarize = %s %q", status, outcome)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, outcome := summarize(c.sess, c.payloads)
			if status != c.status || outcome != c.outcome {
				t.Fatalf("summarize = %s %q, want %s %q", status, outcome, c.status, c.outcome)
			}
		})
	}
}
