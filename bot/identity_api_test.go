package bot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

const (
	opsKey   = "ops-key-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"
	relayKey = "relay-key-2b0b822cd15d6c15b0f00a089f86d081884c7d65"
	qaKey    = "qa-key-7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b"
)

// TestAPI_DecisionsUseTheAuthenticatedIdentity replays finding 4 of issue
// 24: a key holder started a session "as someone else" and approved its
// own forbid_self request; an act_for key started a session for carol and
// approved it for bob; one act_for key supplied both votes of a require: 2
// policy by naming two approvers.
func TestAPI_DecisionsUseTheAuthenticatedIdentity(t *testing.T) {
	var applies atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		applies.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(target.Close)
	ta := newTestApp(t, fmt.Sprintf(`    tools: [deploy]
tools:
  http:
    - name: deploy
      description: Deploy a service
      input: {type: object, properties: {service: {type: string}}, required: [service]}
      url: %s/deploy
      approval: {title: "Deploy {{.service}}"}
api_keys:
  - {name: ops, key: %s}
  - {name: relay, key: %s, act_for: true}
  - {name: qa, key: %s}
approvals:
  approvers: [ann, bob, ops]
  policies:
    - name: four-eyes
      tool: deploy
      require: 2
      forbid_self: true
`, target.URL, opsKey, relayKey, qaKey), Options{})
	propose := func(startedBy string) engine.Approval {
		t.Helper()
		var s engine.Session
		ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"started_by": startedBy}, &s)
		ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"service":"api"}`}), fakemodel.Text("Proposed."))
		ta.sendMessage(s.ID, "deploy the api")
		ta.waitTurns(s.ID, 1)
		var list struct{ Approvals []engine.Approval }
		ta.must(http.StatusOK, "GET", "/v1/approvals?session_id="+s.ID, nil, &list)
		if len(list.Approvals) != 1 || list.Approvals[0].Policy != "four-eyes" {
			t.Fatalf("approvals %+v", list.Approvals)
		}
		return list.Approvals[0]
	}
	decide := func(id, by string) (int, string) {
		t.Helper()
		status, _, body := ta.do("POST", "/v1/approvals/"+id+"/decision", map[string]any{"decision": "approve", "by": by})
		return status, string(body)
	}

	// A key without act_for cannot start a session as someone else...
	ta.key = opsKey
	if status, _, body := ta.do("POST", "/v1/sessions", map[string]any{"started_by": "alice"}); status != http.StatusForbidden ||
		!strings.Contains(string(body), "act_for") {
		t.Fatalf("ops starting a session as alice: %d %s; want 403", status, body)
	}
	// ...so its request is its own, and forbid_self holds.
	a := propose("")
	if a.RequestedBy != "ops" {
		t.Fatalf("requested by %q, want the key's name", a.RequestedBy)
	}
	if status, body := decide(a.ID, ""); status != http.StatusForbidden || !strings.Contains(body, "may not approve their own request") {
		t.Fatalf("ops approving its own request: %d %s; want 403", status, body)
	}

	// An act_for key that started a session for carol approves it for
	// nobody: it is the requester, whoever it names.
	ta.key = relayKey
	c := propose("carol")
	if c.RequestedBy != "carol" {
		t.Fatalf("requested by %q, want the person the key acts for", c.RequestedBy)
	}
	for _, by := range []string{"bob", "ann", "relay"} {
		if status, body := decide(c.ID, by); status != http.StatusForbidden || !strings.Contains(body, "may not approve its own request") {
			t.Fatalf("relay approving for %s the session it started for carol: %d %s; want 403", by, status, body)
		}
	}
	if got := ta.approval(c.ID); got.Status != engine.ApprovalPending || len(got.Votes) != 0 {
		t.Fatalf("after the starting key's approvals: %+v; want pending without votes", got)
	}

	// One act_for key is one vote, whoever it names.
	ta.key = opsKey
	b := propose("")
	ta.key = relayKey
	if status, body := decide(b.ID, "ann"); status != http.StatusOK {
		t.Fatalf("relay for ann: %d %s", status, body)
	}
	if status, body := decide(b.ID, "bob"); status != http.StatusConflict || !strings.Contains(body, "one key is one vote") {
		t.Fatalf("relay for bob, the second vote of the same key: %d %s; want 409", status, body)
	}
	if got := ta.approval(b.ID); got.Status != engine.ApprovalPending || len(got.Votes) != 1 || got.Votes[0].Key != "relay" || got.Votes[0].By != "ann" {
		t.Fatalf("after one key's two votes: %+v; want pending with one vote recording both the key and the person", got)
	}
	ta.key = qaKey
	if status, body := decide(b.ID, ""); status != http.StatusOK {
		t.Fatalf("qa, the second authenticated voter: %d %s", status, body)
	}
	ta.waitApproval(b.ID, engine.ApprovalApplied)
	if applies.Load() != 1 {
		t.Fatalf("%d applies, want 1 (the second request only)", applies.Load())
	}
}
