package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// TestAPI_PoliciesOnHTTPTools runs two of the README's policy examples on
// HTTP tools: a read-like lookup (an approval tool, since it costs money)
// is auto-approved, a create_ticket with priority P0 is refused before a
// card, and a P2 one waits for a person, whose comment the next turn sees.
func TestAPI_PoliciesOnHTTPTools(t *testing.T) {
	var lookups, tickets atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/credit":
			lookups.Add(1)
			_, _ = w.Write([]byte(`{"score":700}`))
		case "/tickets":
			tickets.Add(1)
			_, _ = w.Write([]byte(`{"id":"T-1"}`))
		}
	}))
	t.Cleanup(target.Close)
	ta := newTestApp(t, fmt.Sprintf(`    tools: [credit_lookup, create_ticket]
tools:
  http:
    - name: credit_lookup
      description: Look up a credit score (a paid API)
      input: {type: object, properties: {customer: {type: string}}, required: [customer]}
      method: GET
      url: %[1]s/credit
      approval: {title: "Look up {{.customer}}"}
    - name: create_ticket
      description: Create a ticket
      input: {type: object, properties: {title: {type: string}, priority: {type: string}}, required: [title, priority]}
      url: %[1]s/tickets
      approval: {title: "Create ticket {{.title}}"}
approvals:
  policies:
    - name: lookups-are-reads
      tool: "*_lookup"
      auto_approve: true
    - name: no-p0-from-the-agent
      tool: create_ticket
      when: [{path: $.priority, equals: P0}]
      deny: true
      message: P0 tickets are opened by the on-call engineer; tell the user to page them.
`, target.URL), Options{})
	ta.fake.Push(
		fakemodel.ToolCalls(
			fakemodel.Call{ID: "c1", Name: "credit_lookup", Input: `{"customer":"acme"}`},
			fakemodel.Call{ID: "c2", Name: "create_ticket", Input: `{"title":"Site down","priority":"P0"}`},
			fakemodel.Call{ID: "c3", Name: "create_ticket", Input: `{"title":"Typo","priority":"P2"}`},
		),
		fakemodel.Text("Done what I could."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "check acme and file tickets")
	_, evs := ta.waitTurns(s.ID, 1)

	var list struct{ Approvals []engine.Approval }
	ta.must(http.StatusOK, "GET", "/v1/approvals?session_id="+s.ID, nil, &list)
	var auto, asked engine.Approval
	for _, a := range list.Approvals {
		if a.Tool == "credit_lookup" {
			auto = a
		} else {
			asked = a
		}
	}
	if len(list.Approvals) != 2 || auto.Policy != "lookups-are-reads" || asked.Status != engine.ApprovalPending {
		t.Fatalf("approvals %+v; want the lookup under its policy and one ticket pending (the P0 gets no card)", list.Approvals)
	}
	ta.waitApproval(auto.ID, engine.ApprovalApplied)
	if lookups.Load() != 1 || tickets.Load() != 0 {
		t.Fatalf("%d lookups, %d tickets; want the lookup only", lookups.Load(), tickets.Load())
	}
	refused := false
	for _, ev := range evs {
		if ev.Type == engine.EventToolResult && strings.Contains(string(ev.Data), `refused by policy \"no-p0-from-the-agent\": P0 tickets are opened by the on-call engineer`) {
			refused = true
		}
	}
	if !refused {
		t.Fatal("the P0 ticket was not refused with the policy's message")
	}

	var decided engine.Approval
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+asked.ID+"/decision",
		map[string]any{"decision": "approve", "by": "ann", "comment": "fine, low priority"}, &decided)
	if decided.Comment != "fine, low priority" {
		t.Fatalf("decision answer %+v", decided)
	}
	ta.waitApproval(asked.ID, engine.ApprovalApplied)
	ta.fake.Push(fakemodel.Text("Noted."))
	ta.sendMessage(s.ID, "anything else?")
	ta.waitTurns(s.ID, 2)
	reqs := ta.fake.Requests()
	last := string(reqs[len(reqs)-1].Raw)
	if !strings.Contains(last, `comment: \"fine, low priority\"`) || !strings.Contains(last, `policy \"lookups-are-reads\" (applied without asking a person)`) {
		t.Fatalf("the next request lacks the comment or the policy: %s", last)
	}
	status, _, body := ta.do("POST", "/v1/approvals/"+asked.ID+"/decision",
		map[string]any{"decision": "deny", "by": "ann", "comment": strings.Repeat("x", engine.MaxComment+1)})
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(body, &e)
	if status != http.StatusBadRequest || e.Error.Code != "invalid_request" {
		t.Fatalf("an oversized comment: %d %s", status, body)
	}
}
