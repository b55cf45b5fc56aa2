package engine_test

import (
	"reflect"
	"testing"
	"time"

	"brain/engine"
)

// TestApprovalTeamEvents_RoundTrip: the new approval payloads encode and
// decode through the one codec, and a decision without a comment, policy
// or approvals writes exactly the bytes earlier versions wrote.
func TestApprovalTeamEvents_RoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, p := range []engine.Payload{
		engine.ApprovalVoted{ApprovalID: "apr_1", By: "U1", Comment: "ok", Count: 1, Required: 2, Policy: "two"},
		engine.ApprovalReminder{ApprovalID: "apr_1", ExpiresAt: at, Title: "Deploy api", Tool: "deploy"},
		engine.ApprovalDecided{ApprovalID: "apr_1", By: "U2", Decision: engine.DecisionApprove, DecisionID: "dec_1", Title: "Deploy", Tool: "deploy",
			Comment: "go", Policy: "two", Approvals: []engine.Vote{{By: "U1", At: at, Comment: "ok"}, {By: "U2", At: at}}},
	} {
		ev, err := engine.NewEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != p.EventType() {
			t.Errorf("type %s, want %s", ev.Type, p.EventType())
		}
		got, err := ev.Decode()
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("%s: decoded %+v, %v; want %+v", ev.Type, got, err, p)
		}
	}
	ev, err := engine.NewEvent(engine.ApprovalDecided{ApprovalID: "apr_1", By: "U2", Decision: engine.DecisionDeny, DecisionID: "dec_1", Title: "Deploy", Tool: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"approval_id":"apr_1","by":"U2","decision":"deny","decision_id":"dec_1","title":"Deploy","tool":"deploy"}`; string(ev.Data) != want {
		t.Errorf("approval.decided = %s, want the earlier bytes %s", ev.Data, want)
	}
}
