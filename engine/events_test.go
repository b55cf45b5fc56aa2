package engine_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/tools"
)

// TestWire_LegacyFixtureDecodes reads the log as brain 87c6032 wrote it:
// every event decodes to its typed payload and encodes back to the same
// bytes.
func TestWire_LegacyFixtureDecodes(t *testing.T) {
	evs := readWire(t, legacyFixture)
	if len(evs) != len(fixturePayloads) {
		t.Fatalf("fixture has %d events, the table %d", len(evs), len(fixturePayloads))
	}
	seen := map[string]bool{}
	for i, ev := range evs {
		p, err := ev.Decode()
		if err != nil {
			t.Errorf("event %d: %v", ev.Seq, err)
			continue
		}
		seen[ev.Type] = true
		if want := fixturePayloads[i]; !reflect.DeepEqual(p, want) {
			t.Errorf("event %d %s decodes to\n%#v\nwant\n%#v", ev.Seq, ev.Type, p, want)
		}
		again, err := engine.NewEvent(p)
		if err != nil {
			t.Errorf("event %d: encode: %v", ev.Seq, err)
			continue
		}
		if again.Type != ev.Type || string(again.Data) != string(ev.Data) {
			t.Errorf("event %d re-encodes as\n%s %s\nwant\n%s %s", ev.Seq, again.Type, again.Data, ev.Type, ev.Data)
		}
	}
	for _, typ := range eventTypes {
		if !seen[typ] {
			t.Errorf("the fixture has no %s event", typ)
		}
	}
}

// TestWire_FixtureRoundTrips reads the log as the current writers write
// it: every event decodes and encodes back to the same bytes.
func TestWire_FixtureRoundTrips(t *testing.T) {
	seen := map[string]bool{}
	for _, ev := range readWire(t, wireFixture) {
		p, err := ev.Decode()
		if err != nil || p == nil {
			t.Errorf("event %d %s: %#v, %v", ev.Seq, ev.Type, p, err)
			continue
		}
		seen[ev.Type] = true
		again, err := engine.NewEvent(p)
		if err != nil || again.Type != ev.Type || string(again.Data) != string(ev.Data) {
			t.Errorf("event %d re-encodes as\n%s %s, %v\nwant\n%s %s", ev.Seq, again.Type, again.Data, err, ev.Type, ev.Data)
		}
	}
	for _, typ := range eventTypes {
		if !seen[typ] {
			t.Errorf("the fixture has no %s event", typ)
		}
	}
}

// eventTypes is every type the engine writes.
var eventTypes = []string{
	engine.EventUserMessage, engine.EventAgentMessage, engine.EventToolCall, engine.EventToolProgress,
	engine.EventToolResult, engine.EventQuestionAsked, engine.EventApprovalRequested, engine.EventApprovalDecided,
	engine.EventApprovalApplied, engine.EventApprovalFailed, engine.EventApprovalUnconfirmed,
	engine.EventApprovalExpired, engine.EventApprovalRetried, engine.EventResultCommitted,
	engine.EventSessionError, engine.EventSessionContext, engine.EventSessionStatus,
	engine.EventTurnStarted, engine.EventTurnCompleted,
}

func TestEvent_DecodeUnknownMalformedAndEmpty(t *testing.T) {
	p, err := engine.Event{Type: "some.future.event", Data: json.RawMessage(`{"steps":[]}`)}.Decode()
	if p != nil || err != nil {
		t.Errorf("unknown type: %#v, %v; want nil, nil", p, err)
	}
	for _, data := range []string{`not json`, `{"text":5}`, `[]`} {
		p, err := engine.Event{ID: "evt_9", Seq: 9, Type: engine.EventAgentMessage, Data: json.RawMessage(data)}.Decode()
		if err == nil || p != nil || !strings.Contains(err.Error(), "agent.message event 9 (evt_9)") {
			t.Errorf("%s: %#v, %v; want an error naming the event", data, p, err)
		}
	}
	p, err = engine.Event{Type: engine.EventTurnStarted}.Decode()
	if err != nil || !reflect.DeepEqual(p, engine.TurnStarted{}) {
		t.Errorf("empty data: %#v, %v", p, err)
	}
}

func TestNewEvent_ToolCallInputThatIsNotJSON(t *testing.T) {
	for _, c := range []struct{ input, want string }{
		{`{"a": 1}`, `{"call_id":"c1","name":"add","input":{"a":1}}`},
		{`not json`, `{"call_id":"c1","input":"not json","name":"add"}`},
		{` "a string"`, `{"call_id":"c1","input":"a string","name":"add"}`},
		{``, `{"call_id":"c1","input":"","name":"add"}`},
	} {
		ev, err := engine.NewEvent(engine.ToolCall{ID: "c1", Name: "add", Input: json.RawMessage(c.input)})
		if err != nil || ev.Type != engine.EventToolCall || string(ev.Data) != c.want {
			t.Errorf("input %q: %s %s, %v; want %s", c.input, ev.Type, ev.Data, err, c.want)
		}
	}
	if _, err := engine.NewEvent(engine.ToolProgress{CallID: "c1", Data: json.RawMessage(`{`)}); err == nil {
		t.Error("progress that is not JSON was encoded")
	}
}

func TestPayload_Meanings(t *testing.T) {
	for _, c := range []struct {
		reason    string
		cancelled bool
	}{
		{engine.ReasonCancelled, true},
		{engine.ReasonTurnCancelled, true},
		{"turn cancelled", true},
		{"turn completed", false},
		{engine.ReasonResumed, false},
		{engine.CodeInterrupted, false},
	} {
		if got := (engine.SessionStatus{Reason: c.reason}).Cancelled(); got != c.cancelled {
			t.Errorf("Cancelled(%q) = %v", c.reason, got)
		}
	}
	if !(engine.ApprovalDecided{Decision: "deny"}).Denied() || (engine.ApprovalDecided{Decision: "approve"}).Denied() {
		t.Error("Denied")
	}
	var _ engine.ApprovalUpdate = engine.ApplyUnconfirmed{}
	if _, ok := engine.Payload(engine.ApprovalRequested{}).(engine.ApprovalUpdate); ok {
		t.Error("a request is not an update")
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func status(st engine.Status, reason string) engine.SessionStatus {
	return engine.SessionStatus{Status: st, Reason: reason}
}

func started(ids ...string) engine.TurnStarted { return engine.TurnStarted{InputIDs: ids} }

func toolOK(callID, name, text string) engine.ToolCallResult {
	return engine.ToolCallResult{CallID: callID, Name: name, Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: text}}}}
}

func toolError(callID, name, text string) engine.ToolCallResult {
	r := toolOK(callID, name, text)
	r.Result.IsError = true
	return r
}

func toolUnknown(callID, name, text string) engine.ToolCallResult {
	r := toolError(callID, name, text)
	r.Result.UnknownOutcome = true
	return r
}

// fixturePayloads are the payloads of the fixture's events, in order.
var fixturePayloads = []engine.Payload{
	engine.SessionContext{Text: "Thread <context> & \"quotes\""},
	engine.Input{Text: "hello <world>", Author: "U1", IdempotencyKey: "key-1"},
	started("evt_0003"),
	status("running", "turn started"),
	engine.AgentMessage{Text: "Working on it <now> & later"},
	engine.ToolCall{ID: "call_add", Name: "add", Input: raw(`{"a":1,"b":2}`)},
	engine.ToolCall{ID: "call_fetch", Name: "fetch", Input: raw(`{}`)},
	engine.ToolCall{ID: "call_bad", Name: "add", Input: raw(`"not json"`)},
	engine.ToolCall{ID: "call_0011", Name: "add", Input: raw(`{}`)},
	engine.ToolCall{ID: "call_nope", Name: "nope", Input: raw(`{}`)},
	toolOK("call_add", "add", "{\"sum\":3}"),
	engine.ToolProgress{CallID: "call_fetch", Data: raw(`{"pct":50,"phase":"downloading"}`), Name: "fetch"},
	toolOK("call_fetch", "fetch", "{\"ok\": true, \"note\": \"<b>bold</b> & more\"}"),
	toolError("call_bad", "add", "arguments are not valid JSON"),
	toolError("call_0011", "add", "input does not match its schema: at /: missing properties 'a', 'b'"),
	toolError("call_nope", "nope", "unknown tool \"nope\"; the tools available are listed in this request"),
	engine.ToolCall{ID: "call_report", Name: "report", Input: raw(`{"status":"one"}`)},
	toolOK("call_report", "report", "Result committed to the session: {\"status\": \"one\"}"),
	engine.ResultRecord{CallID: "call_report", Data: raw(`{"status":"one"}`), ReportedAt: at("2026-03-02T09:00:00.014Z"), TurnID: "turn_0004"},
	engine.AgentMessage{Text: "All done."},
	engine.TurnCompleted{Outcome: "completed", Rounds: 2, Usage: engine.Usage{InputTokens: 300, OutputTokens: 36}},
	status("idle", "turn completed"),
	engine.Input{Text: "deploy", Author: "U1"},
	started("evt_0026"),
	status("running", "turn started"),
	engine.AgentMessage{Text: "Which one?"},
	engine.ToolCall{ID: "call_ask", Name: "ask", Input: raw(`{"text":"Which environment?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`)},
	toolOK("call_ask", "ask", "The question was shown to the person. Your turn ends now; their answer arrives as the next message."),
	engine.Question{ID: "q_0032", Text: "Which environment?", Options: []engine.Option{{Label: "Staging", Value: "stg"}, {Label: "Production", Value: "prod"}}, CallID: "call_ask", TurnID: "turn_0027", AskedAt: at("2026-03-02T09:00:00.021Z")},
	engine.TurnCompleted{Outcome: "question", Rounds: 1, Usage: engine.Usage{InputTokens: 100, OutputTokens: 11}},
	status("awaiting_input", "turn question"),
	engine.Input{Text: "careful, friday freeze", Author: "U2"},
	engine.Input{Text: "prod", Answer: &engine.Answer{QuestionID: "q_0032", Value: "prod", Text: "Production"}},
	started("evt_0037", "evt_0038"),
	status("running", "turn started"),
	engine.ToolCall{ID: "call_t1", Name: "ticket", Input: raw(`{"title":"Deploy","mode":"ok"}`)},
	toolOK("call_t1", "ticket", "Recorded for approval as apr_0043: \"Create ticket Deploy\". Nothing has been applied: the change runs only if a person approves it, and you will see the decision in a later message. Do not report it as done."),
	engine.ApprovalRequested{ApprovalID: "apr_0043", CallID: "call_t1", ExpiresAt: at("2026-03-09T09:00:00.028Z"), Facts: []tools.Fact{{Label: "Title", Value: "Deploy"}, {Label: "Mode", Value: "ok"}}, Input: raw(`{"title":"Deploy","mode":"ok"}`), RequestedBy: "U1", Title: "Create ticket Deploy", Tool: "ticket"},
	engine.AgentMessage{Text: "Proposed."},
	engine.TurnCompleted{Outcome: "completed", Rounds: 1, Usage: engine.Usage{InputTokens: 200, OutputTokens: 21}},
	status("idle", "turn completed"),
	engine.ApprovalDecided{ApprovalID: "apr_0043", By: "U1", Decision: "approve", DecisionID: "dec_0049", Title: "Create ticket Deploy", Tool: "ticket"},
	engine.ApplySucceeded{ApprovalID: "apr_0043", DecisionID: "dec_0049", Output: raw(`{"id":"T-1","url":"https://t.example/1?a=1\u0026b=2","decision":"dec_0049"}`), Status: "applied", Tool: "ticket"},
	engine.Input{Text: "more tickets", Author: "U1"},
	started("evt_0052"),
	status("running", "turn started"),
	engine.ToolCall{ID: "call_t2", Name: "ticket", Input: raw(`{"title":"No","mode":"deny"}`)},
	engine.ToolCall{ID: "call_t3", Name: "ticket", Input: raw(`{"title":"Empty","mode":"empty"}`)},
	engine.ToolCall{ID: "call_t4", Name: "ticket", Input: raw(`{"title":"Flaky","mode":"flaky"}`)},
	engine.ToolCall{ID: "call_t5", Name: "ticket", Input: raw(`{"title":"Lost","mode":"unknown"}`)},
	engine.ToolCall{ID: "call_t6", Name: "ticket", Input: raw(`{"title":"Late","mode":"late"}`)},
	toolOK("call_t2", "ticket", "Recorded for approval as apr_0061: \"Create ticket No\". Nothing has been applied: the change runs only if a person approves it, and you will see the decision in a later message. Do not report it as done."),
	engine.ApprovalRequested{ApprovalID: "apr_0061", CallID: "call_t2", ExpiresAt: at("2026-03-09T09:00:00.038Z"), Input: raw(`{"title":"No","mode":"deny"}`), RequestedBy: "U1", Title: "Create ticket No", Tool: "ticket"},
	toolOK("call_t3", "ticket", "Recorded for approval as apr_0064: \"Create ticket Empty\". Nothing has been applied: the change runs only if a person approves it, and you will see the decision in a later message. Do not report it as done."),
	engine.ApprovalRequested{ApprovalID: "apr_0064", CallID: "call_t3", ExpiresAt: at("2026-03-09T09:00:00.04Z"), Facts: []tools.Fact{{Label: "Title", Value: "Empty"}, {Label: "Mode", Value: "empty"}}, Input: raw(`{"title":"Empty","mode":"empty"}`), RequestedBy: "U1", Title: "Create ticket Empty", Tool: "ticket"},
	toolOK("call_t4", "ticket", "Recorded for approval as apr_0067: \"Create ticket Flaky\". Nothing has been applied: the change runs only if a person approves it, and you will see the decision in a later message. Do not report it as done."),
	engine.ApprovalRequested{ApprovalID: "apr_0067", CallID: "call_t4", ExpiresAt: at("2026-03-09T09:00:00.042Z"), Facts: []tools.Fact{{Label: "Title", Value: "Flaky"}, {Label: "Mode", Value: "flaky"}}, Input: raw(`{"title":"Flaky","mode":"flaky"}`), RequestedBy: "U1", Title: "Create ticket Flaky", Tool: "ticket"},
	toolOK("call_t5", "ticket", "Recorded for approval as apr_0070: \"Create ticket Lost\". Nothing has been applied: the change runs only if a person approves it, and you will see the decision in a later message. Do not report it as done."),
	engine.ApprovalRequested{ApprovalID: "apr_0070", CallID: "call_t5", ExpiresAt: at("2026-03-09T09:00:00.044Z"), Facts: []tools.Fact{{Label: "Title", Value: "Lost"}, {Label: "Mode", Value: "unknown"}}, Input: raw(`{"title":"Lost","mode":"unknown"}`), RequestedBy: "U1", Title: "Create ticket Lost", Tool: "ticket"},
	toolOK("call_t6", "ticket", "Recorded for approval as apr_0073: \"Create ticket Late\". Nothing has been applied: the change runs only if a person approves it, and you will see the decision in a later message. Do not report it as done."),
	engine.ApprovalRequested{ApprovalID: "apr_0073", CallID: "call_t6", ExpiresAt: at("2026-03-09T09:00:00.046Z"), Facts: []tools.Fact{{Label: "Title", Value: "Late"}, {Label: "Mode", Value: "late"}}, Input: raw(`{"title":"Late","mode":"late"}`), RequestedBy: "U1", Title: "Create ticket Late", Tool: "ticket"},
	engine.AgentMessage{Text: "Five proposals."},
	engine.TurnCompleted{Outcome: "completed", Rounds: 1, Usage: engine.Usage{InputTokens: 200, OutputTokens: 25}},
	status("idle", "turn completed"),
	engine.ApprovalDecided{ApprovalID: "apr_0061", By: "U1", Decision: "deny", DecisionID: "dec_0079", Title: "Create ticket No", Tool: "ticket"},
	engine.ApprovalDecided{ApprovalID: "apr_0064", By: "U1", Decision: "approve", DecisionID: "dec_0081", Title: "Create ticket Empty", Tool: "ticket"},
	engine.ApplySucceeded{ApprovalID: "apr_0064", DecisionID: "dec_0081", Status: "applied", Tool: "ticket"},
	engine.ApprovalDecided{ApprovalID: "apr_0067", By: "U1", Decision: "approve", DecisionID: "dec_0084", Title: "Create ticket Flaky", Tool: "ticket"},
	engine.ApplyFailed{ApprovalID: "apr_0067", DecisionID: "dec_0084", Error: "tracker refused: duplicate title", Status: "failed", Tool: "ticket"},
	engine.ApprovalRetried{ApprovalID: "apr_0067", Attempt: 2, By: "U1", DecisionID: "dec_0084"},
	engine.ApplySucceeded{ApprovalID: "apr_0067", DecisionID: "dec_0084", Output: raw(`{"id":"T-1","url":"https://t.example/1?a=1\u0026b=2","decision":"dec_0084"}`), Status: "applied", Tool: "ticket"},
	engine.ApprovalDecided{ApprovalID: "apr_0070", By: "U1", Decision: "approve", DecisionID: "dec_0089", Title: "Create ticket Lost", Tool: "ticket"},
	engine.ApplyUnconfirmed{ApprovalID: "apr_0070", DecisionID: "dec_0089", Error: "tracker timed out after the request was sent", Status: "unconfirmed", Tool: "ticket"},
	engine.ApprovalExpiry{ApprovalID: "apr_0073"},
	engine.Input{Text: "loop", Author: "U1"},
	started("evt_0093"),
	status("running", "turn started"),
	engine.ToolCall{ID: "call_l1", Name: "add", Input: raw(`{"a":2,"b":3}`)},
	toolOK("call_l1", "add", "{\"sum\":5}"),
	engine.ToolCall{ID: "call_l2", Name: "add", Input: raw(`{"a":2,"b":3}`)},
	toolOK("call_l2", "add", "{\"sum\":5}"),
	engine.ToolCall{ID: "call_l3", Name: "add", Input: raw(`{"a":2,"b":3}`)},
	toolOK("call_l3", "add", "{\"sum\":5}"),
	engine.TurnCompleted{Outcome: "max_iterations", Rounds: 3, Usage: engine.Usage{InputTokens: 300, OutputTokens: 33}},
	status("idle", "turn max_iterations"),
	engine.Input{Text: "slow", Author: "U1"},
	started("evt_0105"),
	status("running", "turn started"),
	engine.TurnCompleted{Outcome: "cancelled"},
	status("idle", "turn cancelled"),
	engine.Input{Text: "ask me", Author: "U1"},
	started("evt_0112"),
	status("running", "turn started"),
	engine.ToolCall{ID: "call_ask2", Name: "ask", Input: raw(`{"text":"Sure?"}`)},
	toolOK("call_ask2", "ask", "The question was shown to the person. Your turn ends now; their answer arrives as the next message."),
	engine.Question{ID: "q_0117", Text: "Sure?", CallID: "call_ask2", TurnID: "turn_0113", AskedAt: at("2026-03-10T17:00:00.081Z")},
	engine.TurnCompleted{Outcome: "question", Rounds: 1, Usage: engine.Usage{InputTokens: 100, OutputTokens: 11}},
	status("awaiting_input", "turn question"),
	status("idle", "cancelled"),
	engine.Input{Text: "slow again", Author: "U1"},
	started("evt_0123"),
	status("running", "turn started"),
	engine.Input{Text: "stop that", Author: "U1", Mode: "interrupt"},
	engine.TurnCompleted{Outcome: "cancelled"},
	status("idle", "turn cancelled"),
	started("evt_0127"),
	status("running", "turn started"),
	engine.AgentMessage{Text: "Switching."},
	engine.TurnCompleted{Outcome: "completed", Usage: engine.Usage{InputTokens: 100, OutputTokens: 10}},
	status("idle", "turn completed"),
	engine.Input{Text: "rate", Author: "U1"},
	started("evt_0136"),
	status("running", "turn started"),
	engine.Input{Text: "queued meanwhile", Author: "U1"},
	engine.SessionError{Code: "provider_rate_limited", InputID: "evt_0136", Message: "provider_rate_limited (HTTP 429): slow down"},
	engine.SessionError{Code: "input_cancelled", InputID: "evt_0140", Message: "not run: the session stopped before this message; resume and send it again"},
	engine.TurnCompleted{Code: "provider_rate_limited", Outcome: "failed"},
	status("interrupted", "provider_rate_limited"),
	status("idle", "resumed"),
	engine.Input{Text: "auth", Author: "U1"},
	started("evt_0146"),
	status("running", "turn started"),
	engine.SessionError{Code: "provider_auth", InputID: "evt_0146", Message: "provider_auth (HTTP 401): invalid x-api-key"},
	engine.TurnCompleted{Code: "provider_auth", Outcome: "failed"},
	status("failed", "provider_auth"),
	status("idle", "resumed"),
	engine.Input{Text: "internal", Author: "U1"},
	started("evt_0154"),
	status("running", "turn started"),
	engine.SessionError{Code: "internal", InputID: "evt_0154", Message: "internal error; resume to continue"},
	engine.TurnCompleted{Code: "internal", Outcome: "failed"},
	status("interrupted", "internal"),
	status("idle", "resumed"),
	engine.Input{Text: "crash apply", Author: "U1"},
	started("evt_0162"),
	status("running", "turn started"),
	engine.ToolCall{ID: "call_t7", Name: "ticket", Input: raw(`{"title":"Crash","mode":"crash"}`)},
	toolOK("call_t7", "ticket", "Recorded for approval as apr_0167: \"Create ticket Crash\". Nothing has been applied: the change runs only if a person approves it, and you will see the decision in a later message. Do not report it as done."),
	engine.ApprovalRequested{ApprovalID: "apr_0167", CallID: "call_t7", ExpiresAt: at("2026-03-17T17:00:00.108Z"), Facts: []tools.Fact{{Label: "Title", Value: "Crash"}, {Label: "Mode", Value: "crash"}}, Input: raw(`{"title":"Crash","mode":"crash"}`), RequestedBy: "U1", Title: "Create ticket Crash", Tool: "ticket"},
	engine.AgentMessage{Text: "ok"},
	engine.TurnCompleted{Outcome: "completed", Rounds: 1, Usage: engine.Usage{InputTokens: 200, OutputTokens: 21}},
	status("idle", "turn completed"),
	engine.ApprovalDecided{ApprovalID: "apr_0167", By: "U1", Decision: "approve", DecisionID: "dec_0173", Title: "Create ticket Crash", Tool: "ticket"},
	engine.ApplyUnconfirmed{ApprovalID: "apr_0167", DecisionID: "dec_0173", Error: "brain stopped while the apply ran; it may or may not have happened. Retry runs it again with the same decision id.", Status: "unconfirmed", Tool: "ticket"},
	engine.Input{Text: "crash turn", Author: "U1"},
	started("evt_0177"),
	status("running", "turn started"),
	engine.ToolCall{ID: "call_crash", Name: "crash", Input: raw(`{}`)},
	toolUnknown("call_crash", "crash", "brain stopped while \"crash\" was running; its outcome is unknown"),
	engine.SessionError{Code: "interrupted", InputID: "evt_0177", Message: "brain stopped while this turn was running; resume to continue"},
	engine.TurnCompleted{Code: "interrupted", Outcome: "failed"},
	status("interrupted", "interrupted"),
	status("idle", "resumed"),
	engine.Input{Text: "long", Author: "U1"},
	started("evt_0191"),
	status("running", "turn started"),
	engine.SessionError{Code: "interrupted", InputID: "evt_0191", Message: "brain shut down while this turn was running; resume to continue"},
	engine.TurnCompleted{Code: "interrupted", Outcome: "failed"},
	status("interrupted", "interrupted"),
}
