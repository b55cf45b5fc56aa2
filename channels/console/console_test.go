package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"brain/channels/console"
	"brain/engine"
	"brain/tools"
)

func TestPrinter_Print(t *testing.T) {
	var out strings.Builder
	p := console.Printer{W: &out}
	for _, payload := range []engine.Payload{
		engine.Input{Text: "hello"},
		engine.TurnStarted{InputIDs: []string{"evt_1"}},
		engine.AgentMessage{Text: "  Looking.\n"},
		engine.ToolCall{ID: "c1", Name: "fetch", Input: json.RawMessage(`{"url": "https://x.example"}`)},
		engine.ToolProgress{CallID: "c1", Name: "fetch", Data: json.RawMessage(`{"pct":50}`)},
		engine.ToolCallResult{CallID: "c1", Name: "fetch", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: "line one\nline two"}}}},
		engine.ToolCallResult{CallID: "c2", Name: "fetch", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: "timed out"}}, IsError: true, UnknownOutcome: true}},
		engine.Question{ID: "q1", Text: "Which?", Options: []engine.Option{{Label: "Staging", Value: "stg"}, {Label: "Production", Value: "prod"}}},
		engine.ApprovalRequested{ApprovalID: "apr_1", Title: "Create ticket", Facts: []tools.Fact{{Label: "Title", Value: "Printer"}}},
		engine.ApprovalDecided{ApprovalID: "apr_1", Decision: engine.DecisionDeny, By: "U1"},
		engine.ApprovalDecided{ApprovalID: "apr_2", Decision: engine.DecisionApprove, By: "U1"},
		engine.ApplySucceeded{ApprovalID: "apr_2", Output: json.RawMessage(`{"id":"T-1"}`)},
		engine.ApplyFailed{ApprovalID: "apr_3", Error: "refused"},
		engine.ApplyUnconfirmed{ApprovalID: "apr_4", Error: "timed out"},
		engine.ApprovalExpiry{ApprovalID: "apr_5"},
		engine.ApprovalRetried{ApprovalID: "apr_4", Attempt: 2},
		engine.SessionError{Code: "provider_auth", Message: "bad key"},
		engine.TurnCompleted{Outcome: engine.OutcomeCompleted},
		engine.TurnCompleted{Outcome: engine.OutcomeFailed, Code: "provider_auth"},
	} {
		ev, err := engine.NewEvent(payload)
		if err != nil {
			t.Fatal(err)
		}
		p.Print(ev)
	}
	p.Print(engine.Event{Seq: 7, Type: engine.EventAgentMessage, Data: json.RawMessage(`{"text":5}`)})
	want := `
Looking.
  -> fetch {"url":"https://x.example"}
     fetch: {"pct":50}
  <- line one line two
  <- error (outcome unknown): timed out

? Which?
  1) Staging
  2) Production
  (type a number, or write an answer)

  [approval apr_1] Create ticket
    Title: Printer
  [approval apr_1] denied by U1
  [approval apr_2] approved by U1
  [approval apr_2] applied: {"id":"T-1"}
  [approval apr_3] failed: refused
  [approval apr_4] unconfirmed: timed out
  [approval apr_5] expired
! provider_auth: bad key
  (turn ended: failed)
! decode agent.message event 7 (): json: cannot unmarshal number into Go struct field AgentMessage.text of type string
`
	if got := out.String(); got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
}

func TestPrinter_ApprovalComments(t *testing.T) {
	var out strings.Builder
	p := console.Printer{W: &out}
	for _, payload := range []engine.Payload{
		engine.ApprovalVoted{ApprovalID: "apr_1", By: "ann", Count: 1, Required: 2},
		engine.ApprovalDecided{ApprovalID: "apr_1", Decision: engine.DecisionDeny, By: "bob", Comment: "not today"},
		engine.ApprovalDecided{ApprovalID: "apr_2", Decision: engine.DecisionApprove, By: "bob", Comment: "ship it"},
	} {
		ev, err := engine.NewEvent(payload)
		if err != nil {
			t.Fatal(err)
		}
		p.Print(ev)
	}
	want := `  [approval apr_1] 1 of 2 approvals (ann)
  [approval apr_1] denied by bob
    reason: not today
  [approval apr_2] approved by bob
    comment: ship it
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

// TestPrinter_DeltasThenTheMessage: streamed text prints as it comes; the
// round's agent.message then adds only what was not shown, and a message
// that differs from what streamed prints whole.
func TestPrinter_DeltasThenTheMessage(t *testing.T) {
	var out strings.Builder
	p := &console.Printer{W: &out}
	msg := func(text string) engine.Event {
		ev, err := engine.NewEvent(engine.AgentMessage{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	p.Delta(engine.Delta{Text: "Hel"})
	p.Delta(engine.Delta{Text: "lo the"})
	if out.String() != "\nHello the" {
		t.Fatalf("while streaming: %q", out.String())
	}
	p.Print(msg("Hello there."))
	p.Delta(engine.Delta{Text: "Other"})
	p.Print(msg("Redacted answer"))
	want := "\nHello there.\n" + "\nOther\n\nRedacted answer\n"
	if out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}
