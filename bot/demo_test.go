package bot

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// newDemoApp runs config.demo.yaml as shipped, with only its addresses and
// data_dir moved: brain on a free port, the fake model server on another.
// It returns the app and the fake's base URL.
func newDemoApp(t *testing.T) (*testApp, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "config.demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fakeAddr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	text := strings.NewReplacer(
		"127.0.0.1:8080", "127.0.0.1:0",
		"127.0.0.1:8081", fakeAddr,
		"./data-demo", filepath.Join(dir, "data"),
	).Replace(string(raw))
	path := filepath.Join(dir, "config.demo.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{t: t, logs: &syncBuffer{}}
	app, err := New(context.Background(), cfg, Options{Stderr: ta.logs})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ta.app, ta.base = app, "http://"+app.Addr()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return ta, "http://" + fakeAddr
}

func lastAgentText(t *testing.T, evs []engine.Event) string {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == engine.EventAgentMessage {
			return payload[engine.AgentMessage](t, evs[i]).Text
		}
	}
	t.Fatal("no agent.message")
	return ""
}

func demoTickets(t *testing.T, fakeURL string) []fakemodel.DemoTicket {
	t.Helper()
	resp, err := http.Get(fakeURL + fakemodel.DemoTicketsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Tickets []fakemodel.DemoTicket }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Tickets
}

func TestDemoConfig_QuestionApprovalAndTool(t *testing.T) {
	ta, fakeURL := newDemoApp(t)
	s := ta.createSession()

	ta.sendMessage(s.ID, "hello")
	_, evs := ta.waitTurns(s.ID, 1)
	if got := lastAgentText(t, evs); !strings.Contains(got, "TEST DOUBLE") || !strings.Contains(got, "make a ticket") {
		t.Fatalf("help text %q", got)
	}

	// ask me: a question with three options; the answer gets a reply.
	ta.sendMessage(s.ID, "ask me")
	got, evs := ta.waitTurns(s.ID, 2)
	q := got.OpenQuestion()
	if got.Status != engine.StatusAwaitingInput || q == nil || len(q.Options) != 3 || countType(evs, engine.EventQuestionAsked) != 1 {
		t.Fatalf("status %s question %+v", got.Status, q)
	}
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events",
		map[string]any{"type": "user.message", "answer": map[string]any{"question_id": q.ID, "value": q.Options[2].Value}}, nil)
	_, evs = ta.waitTurns(s.ID, 3)
	if got := lastAgentText(t, evs); !strings.Contains(got, "blue") {
		t.Fatalf("reply to the answer %q", got)
	}

	// make a ticket: an approval; approving it creates exactly one ticket.
	ta.sendMessage(s.ID, "make a ticket")
	_, evs = ta.waitTurns(s.ID, 4)
	if countType(evs, engine.EventApprovalRequested) != 1 {
		t.Fatal("no approval.requested")
	}
	if n := len(demoTickets(t, fakeURL)); n != 0 {
		t.Fatalf("%d tickets before approval", n)
	}
	var list struct{ Approvals []engine.Approval }
	ta.must(http.StatusOK, "GET", "/v1/approvals?status=pending", nil, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].Card.Title != "Create ticket Demo ticket" {
		t.Fatalf("pending approvals %+v", list.Approvals)
	}
	a := list.Approvals[0]
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "approve", "by": "newcomer"}, nil)
	ta.waitApproval(a.ID, engine.ApprovalApplied)
	if tickets := demoTickets(t, fakeURL); len(tickets) != 1 || tickets[0].Title != "Demo ticket" {
		t.Fatalf("tickets after approval %+v", tickets)
	}
	if countType(ta.events(s.ID), engine.EventApprovalApplied) != 1 {
		t.Fatal("no approval.applied")
	}

	// use a tool: a plain tool call, its result, and a summary.
	ta.sendMessage(s.ID, "use a tool")
	_, evs = ta.waitTurns(s.ID, 5)
	calls, results := 0, 0
	for _, ev := range evs {
		if ev.Type == engine.EventToolCall && payload[engine.ToolCall](t, ev).Name == fakemodel.DemoLookupTool {
			calls++
		}
		if ev.Type == engine.EventToolResult && payload[engine.ToolCallResult](t, ev).Name == fakemodel.DemoLookupTool {
			results++
		}
	}
	if calls != 1 || results != 1 {
		t.Fatalf("lookup calls %d results %d", calls, results)
	}
	if got := lastAgentText(t, evs); !strings.Contains(got, "lookup answered") || !strings.Contains(got, "test double") {
		t.Fatalf("summary %q", got)
	}
}
