package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

const ticketsToken = "tkt-secret-9f8e7d6c5b4a"

// ticketTarget is a real local HTTP service the declared tools call.
type ticketTarget struct {
	srv *httptest.Server
	mu  sync.Mutex
	// requests by path: the Idempotency-Key and Authorization they carried.
	keys  map[string][]string
	auths []string
}

func newTicketTarget(t *testing.T) *ticketTarget {
	t.Helper()
	tt := &ticketTarget{keys: map[string][]string{}}
	tt.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tt.mu.Lock()
		tt.keys[r.URL.Path] = append(tt.keys[r.URL.Path], r.Header.Get("Idempotency-Key"))
		tt.auths = append(tt.auths, r.Header.Get("Authorization"))
		tt.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/tickets":
			var in map[string]any
			_ = json.Unmarshal(body, &in)
			fmt.Fprintf(w, `{"id":"T-1","title":%q}`, in["title"])
		case "/lookup":
			fmt.Fprintf(w, `{"status":"open","id":%q}`, r.URL.Query().Get("id"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(tt.srv.Close)
	return tt
}

func (tt *ticketTarget) calls(path string) []string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]string(nil), tt.keys[path]...)
}

// toolsConfig declares a run tool, an approval tool and a result tool
// against the target, with a secret header from the environment.
func toolsConfig(target string) string {
	return fmt.Sprintf(`    tools: [ask, lookup_ticket, create_ticket]
    result_tool: report
    when:
      - input_matches: "(?i)refund"
        tools: [issue_refund]
tools:
  http:
    - name: lookup_ticket
      description: Look up a ticket
      input: {type: object, properties: {id: {type: string}}, required: [id]}
      method: GET
      url: %[1]s/lookup
      headers: {Authorization: "Bearer ${TICKETS_TOKEN}"}
    - name: create_ticket
      description: Create a ticket
      input: {type: object, properties: {title: {type: string}}, required: [title]}
      url: %[1]s/tickets
      headers: {Authorization: "Bearer ${TICKETS_TOKEN}"}
      approval:
        title: "Create ticket {{.title}}"
        facts: [{label: Title, value: "{{.title}}"}]
    - name: report
      description: Report the ticket you looked at
      input: {type: object, properties: {id: {type: string}}, required: [id]}
      output: {type: object, properties: {status: {type: string}, id: {type: string}}, required: [status, id]}
      method: GET
      url: %[1]s/lookup
      headers: {Authorization: "Bearer ${TICKETS_TOKEN}"}
    - name: issue_refund
      description: Refund an order
      input: {type: object}
      url: %[1]s/refunds
`, target)
}

func newToolsApp(t *testing.T) (*testApp, *ticketTarget) {
	t.Helper()
	target := newTicketTarget(t)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	path := writeConfig(t, dir, fake.URL(), toolsConfig(target.srv.URL))
	env := func(k string) (string, bool) {
		if k == "TICKETS_TOKEN" {
			return ticketsToken, true
		}
		return "", false
	}
	cfg, err := config.Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{t: t, fake: fake, logs: &syncBuffer{}}
	cfg.Log.Level = "debug"
	app, err := New(context.Background(), cfg, Options{Stderr: ta.logs})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ta.app, ta.base = app, "http://"+app.Addr()
	t.Cleanup(func() {
		fake.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = app.Shutdown(ctx)
		// Secrets must never reach the model, the events or the logs.
		for _, req := range fake.Requests() {
			if strings.Contains(string(req.Raw), ticketsToken) {
				t.Errorf("secret in a model request: %s", req.Raw)
			}
		}
		if strings.Contains(ta.logs.String(), ticketsToken) {
			t.Errorf("secret in the logs")
		}
		db, _ := os.ReadFile(filepath.Join(dir, "data", "brain.db"))
		wal, _ := os.ReadFile(filepath.Join(dir, "data", "brain.db-wal"))
		if strings.Contains(string(db)+string(wal), ticketsToken) {
			t.Errorf("secret stored in the database (events or approvals)")
		}
	})
	return ta, target
}

func (ta *testApp) sendMessage(id, text string) {
	ta.t.Helper()
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/events", map[string]any{"type": "user.message", "text": text}, nil)
}

func (ta *testApp) approval(id string) engine.Approval {
	ta.t.Helper()
	var a engine.Approval
	ta.must(http.StatusOK, "GET", "/v1/approvals/"+id, nil, &a)
	return a
}

func (ta *testApp) waitApproval(id string, want engine.ApprovalStatus) engine.Approval {
	ta.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a := ta.approval(id)
		if a.Status == want {
			return a
		}
		if time.Now().After(deadline) {
			ta.t.Fatalf("approval %s is %s, want %s", id, a.Status, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// providerCall is brain's id of the call the provider named providerID.
func providerCall(t *testing.T, evs []engine.Event, providerID string) string {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == engine.EventToolCall {
			if c := payload[engine.ToolCall](t, ev); c.ProviderID == providerID {
				return c.ID
			}
		}
	}
	t.Fatalf("no tool.call from provider call %s", providerID)
	return ""
}

func TestAPI_HTTPToolsAndApprovalApplyOnce(t *testing.T) {
	ta, target := newToolsApp(t)
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_lookup", Name: "lookup_ticket", Input: `{"id":"T-9"}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "toolu_create", Name: "create_ticket", Input: `{"title":"Printer on fire"}`}),
		fakemodel.Text("I proposed the ticket."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "file a ticket")
	_, evs := ta.waitTurns(s.ID, 1)

	if got, id := target.calls("/lookup"), providerCall(t, evs, "toolu_lookup"); len(got) != 1 || got[0] != s.ID+":"+id {
		t.Fatalf("lookup Idempotency-Key %v, want %s:%s, brain's id of toolu_lookup", got, s.ID, id)
	}
	if len(target.calls("/tickets")) != 0 {
		t.Fatal("the write happened before approval")
	}
	var list struct{ Approvals []engine.Approval }
	ta.must(http.StatusOK, "GET", "/v1/approvals?status=pending", nil, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].Card.Title != "Create ticket Printer on fire" {
		t.Fatalf("pending approvals %+v", list.Approvals)
	}
	a := list.Approvals[0]
	if countType(evs, engine.EventApprovalRequested) != 1 {
		t.Fatal("no approval.requested event")
	}

	var decided engine.Approval
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "approve", "by": "ann"}, &decided)
	got := ta.waitApproval(a.ID, engine.ApprovalApplied)
	if keys := target.calls("/tickets"); len(keys) != 1 || keys[0] != got.DecisionID {
		t.Fatalf("apply calls %v, want one with the decision id %s", keys, got.DecisionID)
	}
	if !strings.Contains(string(got.Output), `"T-1"`) {
		t.Fatalf("output %s", got.Output)
	}
	status, _, body := ta.do("POST", "/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "deny", "by": "bob"})
	if status != http.StatusConflict || !strings.Contains(string(body), "approved by ann") {
		t.Fatalf("second decision: %d %s", status, body)
	}
	for _, auth := range target.auths {
		if auth != "Bearer "+ticketsToken {
			t.Fatalf("target got Authorization %q", auth)
		}
	}
	if len(target.calls("/tickets")) != 1 {
		t.Fatal("a second apply ran")
	}
}

func TestAPI_ConcurrentDecisionsOneApply(t *testing.T) {
	ta, target := newToolsApp(t)
	ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "create_ticket", Input: `{"title":"once"}`}), fakemodel.Text("proposed"))
	s := ta.createSession()
	ta.sendMessage(s.ID, "file it")
	ta.waitTurns(s.ID, 1)
	var list struct{ Approvals []engine.Approval }
	ta.must(http.StatusOK, "GET", "/v1/approvals?status=pending", nil, &list)
	id := list.Approvals[0].ID

	statuses := make(chan int, 50)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _, _ := ta.do("POST", "/v1/approvals/"+id+"/decision", map[string]any{"decision": "approve", "by": fmt.Sprintf("user%d", i)})
			statuses <- st
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for st := range statuses {
		counts[st]++
	}
	if counts[200] != 1 || counts[409] != 49 {
		t.Fatalf("statuses %v", counts)
	}
	ta.waitApproval(id, engine.ApprovalApplied)
	if n := len(target.calls("/tickets")); n != 1 {
		t.Fatalf("%d applies", n)
	}
}

func TestAPI_DenyAndNonInteractive(t *testing.T) {
	ta, target := newToolsApp(t)
	ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "create_ticket", Input: `{"title":"no"}`}), fakemodel.Text("proposed"))
	s := ta.createSession()
	ta.sendMessage(s.ID, "file it")
	ta.waitTurns(s.ID, 1)
	var list struct{ Approvals []engine.Approval }
	ta.must(http.StatusOK, "GET", "/v1/approvals?status=pending", nil, &list)
	var denied engine.Approval
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+list.Approvals[0].ID+"/decision", map[string]any{"decision": "deny", "by": "ann"}, &denied)
	if denied.Status != engine.ApprovalDenied || len(target.calls("/tickets")) != 0 {
		t.Fatalf("deny: %s, %d calls", denied.Status, len(target.calls("/tickets")))
	}
	for _, c := range []struct {
		body   any
		status int
	}{
		{map[string]any{"decision": "maybe", "by": "ann"}, 400},
		{map[string]any{"decision": "approve"}, 400},
	} {
		if st, _, body := ta.do("POST", "/v1/approvals/"+list.Approvals[0].ID+"/decision", c.body); st != c.status {
			t.Errorf("%v: %d %s", c.body, st, body)
		}
	}
	if st, _, _ := ta.do("GET", "/v1/approvals?status=bogus", nil); st != 400 {
		t.Errorf("bad status filter: %d", st)
	}

	// A non-interactive session cannot ask or propose.
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"ok?"}`}, fakemodel.Call{Name: "create_ticket", Input: `{"title":"x"}`}),
		fakemodel.Text("done without it"),
	)
	var batch engine.Session
	ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"interactive": false}, &batch)
	ta.sendMessage(batch.ID, "file it")
	got, evs := ta.waitTurns(batch.ID, 1)
	if got.Status != engine.StatusIdle || got.OpenQuestion() != nil {
		t.Fatalf("status %s", got.Status)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventToolResult && !strings.Contains(string(ev.Data), "interactive:false") {
			t.Errorf("tool result does not explain: %s", ev.Data)
		}
	}
	ta.must(http.StatusOK, "GET", "/v1/approvals?status=pending&session_id="+batch.ID, nil, &list)
	if len(list.Approvals) != 0 {
		t.Fatalf("pending approvals in a non-interactive session: %+v", list.Approvals)
	}
}

func TestAPI_AskAnswerAndResults(t *testing.T) {
	ta, _ := newToolsApp(t)
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"Which ticket?","options":[{"label":"The first","value":"T-1"},{"label":"The second","value":"T-2"}]}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "r1", Name: "report", Input: `{"id":"T-2"}`}),
		fakemodel.Text("Reported T-2."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "report on a ticket")
	got, _ := ta.waitTurns(s.ID, 1)
	q := got.OpenQuestion()
	if got.Status != engine.StatusAwaitingInput || q == nil {
		t.Fatalf("status %s question %s", got.Status, got.Question)
	}
	status, _, body := ta.do("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "answer": map[string]any{"question_id": "q_other", "value": "T-2"}})
	if status != http.StatusConflict {
		t.Fatalf("answer to another question: %d %s", status, body)
	}
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "answer": map[string]any{"question_id": q.ID, "value": "T-2"}}, nil)
	got, evs := ta.waitTurns(s.ID, 2)
	if !strings.Contains(string(got.Result), `"T-2"`) {
		t.Fatalf("session result %s", got.Result)
	}
	var res struct{ Results []map[string]any }
	ta.must(http.StatusOK, "GET", "/v1/sessions/"+s.ID+"/results", nil, &res)
	if len(res.Results) != 1 || res.Results[0]["call_id"] != providerCall(t, evs, "r1") {
		t.Fatalf("results %+v", res.Results)
	}
	if d, ok := res.Results[0]["data"].(map[string]any); !ok || d["id"] != "T-2" {
		t.Fatalf("result data %+v", res.Results[0]["data"])
	}
	// The conditional refund tool is offered only for matching input.
	reqs := ta.fake.Requests()
	if strings.Contains(string(reqs[0].Raw), "issue_refund") {
		t.Fatal("refund tool offered for unrelated input")
	}
	ta.fake.Push(fakemodel.Text("About that refund."))
	ta.sendMessage(s.ID, "I want a refund")
	ta.waitTurns(s.ID, 3)
	reqs = ta.fake.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Raw), `"name":"issue_refund"`) {
		t.Fatal("refund tool not offered for matching input")
	}
}
