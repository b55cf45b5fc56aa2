package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
)

// turnWithTwoTools appends a turn in which the model calls two tools at
// once (one fails), then answers; events are a second apart.
func turnWithTwoTools(t *testing.T, f *fakeEngine, id string) {
	t.Helper()
	f.appendEvent(t, id, engine.Input{Text: "Is the deploy healthy?", Author: "ops"})
	f.appendTurnEvent(t, id, "turn1", engine.TurnStarted{InputIDs: []string{"ev1"}})
	f.appendTurnEvent(t, id, "turn1", engine.SessionStatus{Status: engine.StatusRunning})
	f.appendTurnEvent(t, id, "turn1", engine.ToolCall{ID: "c1", Name: "http_get", Input: json.RawMessage(`{"url":"https://status.example/api"}`)})
	f.appendTurnEvent(t, id, "turn1", engine.ToolCall{ID: "c2", Name: "logs_search", Input: json.RawMessage(`{"query":"error"}`)})
	f.appendTurnEvent(t, id, "turn1", engine.ToolProgress{CallID: "c2", Name: "logs_search", Data: json.RawMessage(`{"scanned":1000}`)})
	f.appendTurnEvent(t, id, "turn1", engine.ToolCallResult{CallID: "c1", Name: "http_get", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: `{"status":"ok"}`}}}})
	f.appendTurnEvent(t, id, "turn1", engine.ToolCallResult{CallID: "c2", Name: "logs_search", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: "index unavailable"}}, IsError: true}})
	f.appendTurnEvent(t, id, "turn1", engine.AgentMessage{Text: "The deploy is **healthy**."})
	f.appendTurnEvent(t, id, "turn1", engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Rounds: 2, Usage: engine.Usage{InputTokens: 2_000_000, OutputTokens: 100_000}})
	f.appendTurnEvent(t, id, "turn1", engine.SessionStatus{Status: engine.StatusIdle})
}

func TestTrace_TurnWithTwoTools(t *testing.T) {
	f := newFakeEngine()
	f.addSession(engine.Session{ID: "s1"})
	turnWithTwoTools(t, f, "s1")
	tr := newTracer(func(u engine.Usage) (float64, bool) {
		return (config.PriceConfig{Input: 3, Output: 15}).Cost(u.UncachedInputTokens(), 0, 0, u.OutputTokens), true
	})
	for _, ev := range f.events["s1"] {
		tr.add(ev)
	}
	if len(tr.entries) != 2 || tr.entries[0].Item == nil || tr.entries[1].Turn == nil {
		t.Fatalf("entries = %+v, want the message then the turn", tr.entries)
	}
	turn := tr.entries[1].Turn
	if turn.Running || turn.Outcome != engine.OutcomeCompleted || turn.Tools != 2 || turn.Failed != 1 || turn.Duration() != 8*time.Second {
		t.Errorf("turn = %+v (duration %v)", turn, turn.Duration())
	}
	if !turn.Priced || turn.Cost != 7.5 {
		t.Errorf("cost = %v (priced %v), want $7.50", turn.Cost, turn.Priced)
	}
	type span struct {
		kind, name string
		dur        time.Duration
		err        bool
	}
	var got []span
	for _, sp := range turn.Spans {
		got = append(got, span{sp.Kind, sp.Name, sp.Duration(), sp.Error})
	}
	want := []span{
		{"model", "model", 2 * time.Second, false}, // turn started at 2s, first call at 4s
		{"tool", "http_get", 3 * time.Second, false},
		{"tool", "logs_search", 3 * time.Second, true},
		{"model", "model", time.Second, false},
		{"item", "", 0, false}, // the agent's message
	}
	if len(got) != len(want) {
		t.Fatalf("spans = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if turn.Spans[2].Progress != 1 || !strings.Contains(turn.Spans[1].Args, "status.example") {
		t.Errorf("logs_search progress %d, http_get args %q", turn.Spans[2].Progress, turn.Spans[1].Args)
	}
}

func TestTrace_RunningToolAndUnfinishedCall(t *testing.T) {
	f := newFakeEngine()
	f.addSession(engine.Session{ID: "s1"})
	f.appendTurnEvent(t, "s1", "turn1", engine.TurnStarted{})
	f.appendTurnEvent(t, "s1", "turn1", engine.ToolCall{ID: "c1", Name: "sandbox_exec", Input: json.RawMessage(`{}`)})
	tr := newTracer(nil)
	for _, ev := range f.events["s1"] {
		tr.add(ev)
	}
	turn := tr.entries[0].Turn
	if !turn.Running || !turn.Spans[len(turn.Spans)-1].Running || turn.Thinking() {
		t.Fatalf("a call without a result in a running turn is not running: %+v", turn)
	}
	// The turn ends (cancelled) without the result: the call's outcome is
	// unknown, not running.
	tr.add(f.appendTurnEvent(t, "s1", "turn1", engine.TurnCompleted{Outcome: engine.OutcomeCancelled}))
	sp := turn.Spans[len(turn.Spans)-1]
	if turn.Running || sp.Running || !sp.Unknown {
		t.Fatalf("after the turn ended: turn running %v, span %+v", turn.Running, sp)
	}
}

func TestConsole_TraceView(t *testing.T) {
	c := newConsole(t, Config{Prices: map[string]*config.PriceConfig{"default": {Input: 3, Output: 15}}})
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	turnWithTwoTools(t, c.eng, "ses1")
	_, page := c.get("/sessions/ses1")
	for _, want := range []string{`id="turn-turn1"`, "Turn 1 · completed", "8.0s", "2 tool calls, 1 failed", "$7.50",
		"<code>http_get</code>", "<code>logs_search</code>", "<summary>arguments</summary>", "<summary>result</summary>",
		"<strong>healthy</strong>", `href="/sessions/ses1?view=raw"`, "view=trace"} {
		if !strings.Contains(page, want) {
			t.Errorf("trace lacks %q", want)
		}
	}
	// Bookkeeping is folded into the turn's header.
	for _, hidden := range []string{"turn started", "status running", "status idle"} {
		if strings.Contains(page, hidden) {
			t.Errorf("trace shows bookkeeping %q", hidden)
		}
	}
	_, raw := c.get("/sessions/ses1?view=raw")
	for _, want := range []string{"turn started", "status running", "called http_get"} {
		if !strings.Contains(raw, want) {
			t.Errorf("raw events lack %q", want)
		}
	}
}

// TestConsole_LiveTraceAndHeader: a trace stream sends the running turn
// whole as it changes, and the header again when the status changes,
// with Cancel only while the turn runs.
func TestConsole_LiveTraceAndHeader(t *testing.T) {
	c := newConsole(t, Config{})
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusRunning})
	c.eng.appendEvent(t, "ses1", engine.Input{Text: "go"})
	c.eng.appendTurnEvent(t, "ses1", "turn1", engine.TurnStarted{})
	_, page := c.get("/sessions/ses1")
	if !strings.Contains(page, "Cancel the turn") || !strings.Contains(page, "working…") {
		t.Fatalf("a running session's page lacks Cancel or the working model:\n%s", page)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.srv.URL+"/sessions/ses1/live?after=2&view=trace&turn=1", nil)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	c.eng.appendTurnEvent(t, "ses1", "turn1", engine.ToolCall{ID: "c1", Name: "http_get", Input: json.RawMessage(`{}`)})
	seen := readEvents(t, sc, func(ev, data string) bool { return ev == "entry" })
	last := seen[len(seen)-1]
	if !strings.Contains(last, `id="turn-turn1"`) || !strings.Contains(last, "<code>http_get</code>") || !strings.Contains(last, "running") {
		t.Fatalf("the turn was not sent again with the running call: %q", last)
	}
	c.eng.setStatus("ses1", engine.StatusIdle)
	c.eng.appendTurnEvent(t, "ses1", "turn1", engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Usage: engine.Usage{InputTokens: 42, OutputTokens: 7}})
	seen = readEvents(t, sc, func(ev, data string) bool { return ev == "header" })
	header := seen[len(seen)-1]
	if strings.Contains(header, "Cancel the turn") || !strings.Contains(header, "42 in / 7 out") || !strings.Contains(header, "status-idle") {
		t.Fatalf("header after the turn: %q", header)
	}
}

// TestConsole_InboxDecideAndAnswer: the inbox lists what the visitor may
// decide or answer, counts it in the navigation, and decides and answers
// inline through the same handlers as the other pages.
func TestConsole_InboxDecideAndAnswer(t *testing.T) {
	c := newConsole(t, Config{})
	q := engine.Question{ID: "q1", Text: "Which region?", Options: []engine.Option{{Label: "EU", Value: "eu"}}, AskedAt: t0}
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginConsole, Status: engine.StatusAwaitingInput, Question: mustJSON(q)})
	c.eng.addSession(engine.Session{ID: "ses2", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	c.eng.approvals["apr1"] = engine.Approval{ID: "apr1", SessionID: "ses2", Tool: "deploy", Agent: "default", Status: engine.ApprovalPending,
		Card: toolsCard("Deploy v2"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	c.eng.approvals["apr2"] = engine.Approval{ID: "apr2", SessionID: "ses2", Tool: "deploy", Agent: "default", Status: engine.ApprovalApplied, CreatedAt: t0}
	_, page := c.get("/inbox")
	for _, want := range []string{"Deploy v2", "Which region?", `value="eu"`, `class="badge" aria-label="2 waiting">2<`} {
		if !strings.Contains(page, want) {
			t.Errorf("inbox lacks %q", want)
		}
	}
	resp, _ := c.post("/approvals/apr1/decision", url.Values{"csrf": {c.csrf(page)}, "decision": {"approve"}, "comment": {"ship it"}, "back": {"/inbox"}})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/inbox?notice=") {
		t.Fatalf("decide inline: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = c.post("/sessions/ses1/messages", url.Values{"csrf": {c.csrf(page)}, "question_id": {"q1"}, "value": {"eu"}, "back": {"/inbox"}})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/inbox?notice=") {
		t.Fatalf("answer inline: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if len(c.eng.decisions) != 1 || c.eng.decisions[0].Comment != "ship it" || len(c.eng.sent) != 1 || c.eng.sent[0].Answer.Value != "eu" {
		t.Fatalf("decisions %+v, sent %+v", c.eng.decisions, c.eng.sent)
	}
	// Decided: the approval leaves the inbox and the count drops.
	_, page = c.get("/inbox")
	if strings.Contains(page, "Deploy v2") || !strings.Contains(page, `aria-label="1 waiting"`) {
		t.Errorf("after the decision the inbox still shows it, or the count is wrong")
	}
}

func TestConsole_UsagePage(t *testing.T) {
	now := time.Now().UTC()
	c := newConsole(t, Config{Clock: func() time.Time { return now }, Prices: map[string]*config.PriceConfig{"default": {Input: 3, Output: 15}}})
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginSlack, StartedBy: "U42", CreatedAt: now, UpdatedAt: now})
	c.eng.appendEvent(t, "ses1", engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Usage: engine.Usage{InputTokens: 1_000_000, OutputTokens: 200_000}})
	// The fake stamps events at t0 + seq; the page asks for the last 30
	// days, so stamp this one now.
	c.eng.mu.Lock()
	c.eng.events["ses1"][0].CreatedAt = now
	c.eng.mu.Unlock()
	_, page := c.get("/usage")
	for _, want := range []string{"<svg", "1000000", "200000", "$6.00", "U42", "slack", "<title>" + now.Format("2006-01-02")} {
		if !strings.Contains(page, want) {
			t.Errorf("usage page lacks %q", want)
		}
	}
}

func TestConsole_ApprovalShowsCommentAndVotes(t *testing.T) {
	c := newConsole(t, Config{})
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	c.eng.approvals["apr1"] = engine.Approval{ID: "apr1", SessionID: "ses1", Tool: "deploy", Agent: "default", Status: engine.ApprovalDenied,
		Required: 2, Votes: []engine.Vote{{By: "U1", At: t0, Comment: "looks fine"}}, DecidedBy: "U2", DecidedAt: t0, Comment: "not on a <Friday>", CreatedAt: t0}
	_, page := c.get("/approvals/apr1")
	for _, want := range []string{"1 of 2", "U1 at", "looks fine", "Reason", "not on a &lt;Friday&gt;", "Decided by"} {
		if !strings.Contains(page, want) {
			t.Errorf("approval page lacks %q", want)
		}
	}
}
