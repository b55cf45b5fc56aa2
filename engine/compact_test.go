package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

// newFakeHarness is newHarness with options for its fake model server.
func newFakeHarness(t *testing.T, fakeOpts []fakemodel.Option, opts ...harnessOption) *harness {
	t.Helper()
	return harnessOn(t, fakemodel.New(fakeOpts...), opts...)
}

// harnessOn is newHarness on the given fake model server, which it closes.
func harnessOn(t *testing.T, fake *fakemodel.Server, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	h.fake = fake
	t.Cleanup(h.fake.Close)
	h.path = filepath.Join(t.TempDir(), "brain.db")
	h.open(opts...)
	return h
}

// withModel replaces the agent's model (the Anthropic adapter).
func withModel(m engine.Model) harnessOption {
	return func(_ *engine.Config, a *engine.Agent) { a.Model = m }
}

func withBudget(window, maxTokens int) harnessOption {
	return func(_ *engine.Config, a *engine.Agent) { a.ContextWindow, a.MaxTokens = window, maxTokens }
}

// pageTool returns a page of n bytes that names the page asked for.
func pageTool(n int) tools.Definition {
	return tools.Definition{
		Name: "fetch_page", Description: "Fetch a page",
		Input: json.RawMessage(`{"type":"object","properties":{"page":{"type":"integer"}},"required":["page"]}`),
		Run: func(_ context.Context, c tools.Call) (json.RawMessage, error) {
			var in struct{ Page int }
			if err := json.Unmarshal(c.Input, &in); err != nil {
				return nil, err
			}
			body := fmt.Sprintf("page %d: ", in.Page) + strings.Repeat("lorem ipsum ", n/12)
			return json.Marshal(map[string]string{"body": body})
		},
	}
}

func reportTool() tools.Definition {
	return tools.Definition{
		Name: "report", Description: "Report the outcome", Result: true,
		Input:  json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`),
		Output: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`),
		Run: func(_ context.Context, c tools.Call) (json.RawMessage, error) {
			return c.Input, nil
		},
	}
}

// isSummaryCall tells the compaction's summary call from a turn's call.
func isSummaryCall(req fakemodel.Request) bool {
	return strings.Contains(req.System, "working memory")
}

// lastUserBlocks is the content of the request's last message.
func lastUserContent(t *testing.T, req fakemodel.Request) string {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(req.Messages, &msgs); err != nil || len(msgs) == 0 {
		t.Errorf("messages: %v", err)
		return ""
	}
	return string(msgs[len(msgs)-1].Content)
}

// longSessionScript: "report" makes the model call the result tool, "ask"
// the ask tool, "fetch N" fetch_page; a round after tool results answers.
func longSessionScript(t *testing.T) fakemodel.Step {
	summaries := 0
	return fakemodel.Func(func(req fakemodel.Request) fakemodel.Step {
		if isSummaryCall(req) {
			summaries++
			return fakemodel.Text(fmt.Sprintf("SUMMARY-%d: the person asked for pages, one per turn.", summaries))
		}
		last := lastUserContent(t, req)
		switch {
		case strings.Contains(last, "tool_result"):
			return fakemodel.Text("done")
		case strings.Contains(last, "please report"):
			return fakemodel.ToolCalls(fakemodel.Call{Name: "report", Input: `{"status":"ok-42"}`})
		case strings.Contains(last, "please ask"):
			return fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"Which colour, QX-7?","options":[{"label":"Red","value":"red"},{"label":"Blue","value":"blue"}]}`})
		}
		var page int
		fmt.Sscanf(last[strings.Index(last, "fetch ")+len("fetch "):], "%d", &page)
		return fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: fmt.Sprintf(`{"page":%d}`, page)})
	})
}

func TestCompaction_LongSessionStaysUnderTheWindow(t *testing.T) {
	const window, answer = 6000, 512
	h := newFakeHarness(t, []fakemodel.Option{fakemodel.WithContextWindow(window), fakemodel.WithRecordLimit(-1)},
		withBudget(window, answer), withTools(pageTool(4000), reportTool()), withAsk())
	h.fake.SetDefault(longSessionScript(t))
	s := h.session()

	h.send(s.ID, "please report")
	h.waitTurns(s.ID, 1)
	h.send(s.ID, "please ask")
	s, _ = h.waitTurns(s.ID, 2)
	q := s.OpenQuestion()
	if q == nil {
		t.Fatal("no open question after the ask")
	}
	if _, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Text: "Blue", Answer: &engine.Answer{QuestionID: q.ID, Value: "blue", Text: "Blue"}}); err != nil {
		t.Fatal(err)
	}
	h.waitTurns(s.ID, 3)
	const turns = 24
	for i := 0; i < turns; i++ {
		h.send(s.ID, fmt.Sprintf("fetch %d", i))
		h.waitTurns(s.ID, 4+i)
	}
	s, evs := h.waitTurns(s.ID, 3+turns)
	if s.Status != engine.StatusIdle {
		t.Fatalf("status %s after %d turns:\n%s", s.Status, 3+turns, dump(evs))
	}
	for _, ev := range ofType(evs, engine.EventTurnCompleted) {
		if o := payload[engine.TurnCompleted](t, ev).Outcome; o == engine.OutcomeFailed {
			t.Fatalf("a turn failed:\n%s", dump(evs))
		}
	}
	compactions := ofType(evs, engine.EventContextCompacted)
	var summaries []engine.ContextCompacted
	for _, ev := range compactions {
		if c := payload[engine.ContextCompacted](t, ev); c.Summary != "" {
			summaries = append(summaries, c)
		}
	}
	if len(summaries) == 0 {
		t.Fatalf("no summary in %d compactions:\n%s", len(compactions), dump(evs))
	}
	t.Logf("%d compactions, %d with a summary, over %d turns", len(compactions), len(summaries), 3+turns)
	first := summaries[0]
	if first.FromSeq != 1 || first.ToSeq <= first.FromSeq || first.TokensAfter >= first.TokensBefore {
		t.Errorf("first summary: %+v", first)
	}

	reqs := h.fake.Requests()
	sawSummary := false
	for i, req := range reqs {
		n := len(req.Raw)/4 + 1
		if n > window {
			t.Errorf("request %d is %d tokens, over the %d window", i, n, window)
		}
		if isSummaryCall(req) {
			sawSummary = true
			continue
		}
		if !sawSummary {
			continue
		}
		// Every request after the first summary carries a summary, the
		// result tool's latest value and the question the person answered.
		body := string(req.Raw)
		for _, want := range []string{"SUMMARY-", "ok-42", "Which colour, QX-7?"} {
			if !strings.Contains(body, want) {
				t.Errorf("request %d lacks %q", i, want)
			}
		}
	}
	// The log keeps everything: every page's full result is still there.
	if got := len(results(t, evs)); got < turns {
		t.Errorf("%d tool results in the log, want at least %d", got, turns)
	}
	// A turn writes at most one summary.
	perTurn := map[string]int{}
	for _, ev := range compactions {
		if payload[engine.ContextCompacted](t, ev).Summary != "" {
			perTurn[ev.TurnID]++
			if perTurn[ev.TurnID] > 1 {
				t.Errorf("turn %s summarised twice", ev.TurnID)
			}
		}
	}
}

func TestCompaction_ProviderContextErrorCompactsAndRetriesOnce(t *testing.T) {
	// Pages too small to shorten: the compaction has to summarise.
	h := newFakeHarness(t, nil, withTools(pageTool(1500)))
	h.fake.SetDefault(longSessionScript(t))
	s := h.session()
	for i := 0; i < 4; i++ {
		h.send(s.ID, fmt.Sprintf("fetch %d", i))
		h.waitTurns(s.ID, i+1)
	}
	before := h.fake.Received()
	h.fake.Push(fakemodel.FailContextTooLong())
	h.send(s.ID, "fetch 99")
	s, evs := h.waitTurns(s.ID, 5)
	if s.Status != engine.StatusIdle || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("status %s:\n%s", s.Status, dump(evs))
	}
	cs := ofType(evs, engine.EventContextCompacted)
	if len(cs) != 1 {
		t.Fatalf("%d compactions, want 1:\n%s", len(cs), dump(evs))
	}
	if c := payload[engine.ContextCompacted](t, cs[0]); c.Reason != engine.CompactProvider || c.Summary == "" {
		t.Errorf("compaction %+v", c)
	}
	// refused call, summary call, the retry, the round after the tool.
	reqs := h.fake.Requests()[before:]
	if len(reqs) != 4 || !isSummaryCall(reqs[1]) || isSummaryCall(reqs[2]) {
		t.Fatalf("%d requests after the refusal, want refused, summary, retry, next round", len(reqs))
	}
	if !strings.Contains(string(reqs[2].Raw), "SUMMARY-1") || strings.Contains(string(reqs[2].Raw), "page 0: lorem") {
		t.Error("the retry does not carry the summary in place of the old pages")
	}
}

func TestCompaction_ProviderRefusesTwiceFailsClearly(t *testing.T) {
	h := newFakeHarness(t, nil, withTools(pageTool(1500)))
	h.fake.SetDefault(longSessionScript(t))
	s := h.session()
	for i := 0; i < 3; i++ {
		h.send(s.ID, fmt.Sprintf("fetch %d", i))
		h.waitTurns(s.ID, i+1)
	}
	h.fake.Push(fakemodel.FailContextTooLong(), fakemodel.Text("SUMMARY"), fakemodel.FailContextTooLong())
	in := h.send(s.ID, "fetch 7")
	s, evs := h.waitTurns(s.ID, 4)
	if s.Status != engine.StatusFailed {
		t.Fatalf("status %s, want failed:\n%s", s.Status, dump(evs))
	}
	errs := ofType(evs, engine.EventSessionError)
	e := payload[engine.SessionError](t, errs[len(errs)-1])
	if e.Code != engine.CodeContextTooLarge || e.InputID != in.ID || !strings.Contains(e.Message, "prompt is too long") ||
		!strings.Contains(e.Message, "after compaction") {
		t.Errorf("error %+v", e)
	}
}

func TestCompaction_InputThatCannotFitFailsWithSizes(t *testing.T) {
	h := newFakeHarness(t, nil, withBudget(2000, 500))
	s := h.session()
	in := h.send(s.ID, strings.Repeat("far too long ", 1000))
	s, evs := h.waitTurns(s.ID, 1)
	if s.Status != engine.StatusFailed {
		t.Fatalf("status %s:\n%s", s.Status, dump(evs))
	}
	if h.fake.Received() != 0 {
		t.Errorf("%d requests reached the provider", h.fake.Received())
	}
	e := payload[engine.SessionError](t, ofType(evs, engine.EventSessionError)[0])
	t.Log(e.Message)
	if e.Code != engine.CodeContextTooLarge || e.InputID != in.ID ||
		!strings.Contains(e.Message, "over the 1500 the context window allows (2000 tokens, 500 kept for the answer)") ||
		!strings.Contains(e.Message, "the newest input alone is about") {
		t.Errorf("error %+v", e)
	}
}

func TestCompaction_ForcedByCompact(t *testing.T) {
	h := newFakeHarness(t, nil, withTools(pageTool(4000), reportTool()))
	h.fake.SetDefault(longSessionScript(t))
	s := h.session()
	if _, err := h.eng.Compact(context.Background(), s.ID); engine.CodeOf(err) != engine.CodeConflict {
		t.Errorf("compact of an empty session: %v, want conflict", err)
	}
	h.send(s.ID, "please report")
	h.waitTurns(s.ID, 1)
	for i := 0; i < 3; i++ {
		h.send(s.ID, fmt.Sprintf("fetch %d", i))
		h.waitTurns(s.ID, i+2)
	}
	c, err := h.eng.Compact(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Reason != engine.CompactAPI || c.Summary == "" || c.TokensAfter >= c.TokensBefore {
		t.Errorf("compaction %+v", c)
	}
	kept := strings.Join(c.Kept, "\n")
	if !strings.Contains(kept, "ok-42") {
		t.Errorf("kept notes lack the result: %q", kept)
	}
	_, evs := h.waitTurns(s.ID, 4)
	last := ofType(evs, engine.EventContextCompacted)
	if len(last) != 1 || last[0].TurnID != "" {
		t.Fatalf("compaction events: %v", last)
	}
	u, err := h.eng.SessionUsage(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Usage.InputTokens == 0 || u.InputTokens <= c.Usage.InputTokens || u.OutputTokens == 0 {
		t.Errorf("session usage %+v, compaction usage %+v", u, c.Usage)
	}
	// The next turn reads the summary.
	h.send(s.ID, "fetch 9")
	h.waitTurns(s.ID, 5)
	reqs := h.fake.Requests()
	if body := string(reqs[len(reqs)-2].Raw); !strings.Contains(body, "SUMMARY-1") || !strings.Contains(body, "ok-42") {
		t.Error("the turn after the compaction does not see the summary")
	}
}

// One long turn outgrows the window: its older rounds are shortened and
// then summarised mid-turn, and the input it answers stays in every
// request.
func TestCompaction_MidTurnKeepsTheTurnsInput(t *testing.T) {
	const window, answer = 5000, 512
	h := newFakeHarness(t, []fakemodel.Option{fakemodel.WithContextWindow(window), fakemodel.WithRecordLimit(-1)},
		withBudget(window, answer), withTools(pageTool(1900)), withIterations(16))
	page := 0
	h.fake.SetDefault(fakemodel.Func(func(req fakemodel.Request) fakemodel.Step {
		if isSummaryCall(req) {
			return fakemodel.Text("SUMMARY: pages read so far, all about lorem ipsum.")
		}
		if page == 15 {
			return fakemodel.Text("all read")
		}
		page++
		return fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: fmt.Sprintf(`{"page":%d}`, page)})
	}))
	s := h.session()
	h.send(s.ID, "read all fifteen pages QZ-1")
	s, evs := h.waitTurns(s.ID, 1)
	if s.Status != engine.StatusIdle || outcome(t, evs) != engine.OutcomeCompleted {
		t.Fatalf("status %s:\n%s", s.Status, dump(evs))
	}
	var summarised bool
	for _, ev := range ofType(evs, engine.EventContextCompacted) {
		summarised = summarised || payload[engine.ContextCompacted](t, ev).Summary != ""
	}
	if !summarised {
		t.Fatalf("no summary:\n%s", dump(ofType(evs, engine.EventContextCompacted)))
	}
	for i, req := range h.fake.Requests() {
		if n := len(req.Raw)/4 + 1; n > window {
			t.Errorf("request %d is %d tokens, over the window", i, n)
		}
		if !isSummaryCall(req) && !strings.Contains(string(req.Raw), "read all fifteen pages QZ-1") {
			t.Errorf("request %d lost the turn's input", i)
		}
	}
}

func withIterations(n int) harnessOption {
	return func(_ *engine.Config, a *engine.Agent) { a.MaxToolIterations = n }
}

// A second refusal in a turn that has summarised once: nothing more can be
// compacted without another summary, so the turn fails clearly.
func TestCompaction_SecondRefusalInATurnFails(t *testing.T) {
	h := newFakeHarness(t, nil, withTools(pageTool(1200)))
	calls := 0
	h.fake.SetDefault(fakemodel.Func(func(req fakemodel.Request) fakemodel.Step {
		if isSummaryCall(req) {
			return fakemodel.Text("SUMMARY")
		}
		calls++
		switch calls {
		case 1, 2, 3, 4:
			// Two turns of one page each.
			if calls%2 == 1 {
				return fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: fmt.Sprintf(`{"page":%d}`, calls)})
			}
			return fakemodel.Text("done")
		case 5, 7:
			return fakemodel.FailContextTooLong()
		case 6:
			return fakemodel.ToolCalls(fakemodel.Call{Name: "fetch_page", Input: `{"page":9}`})
		}
		return fakemodel.Text("unexpected")
	}))
	s := h.session()
	for i := 0; i < 2; i++ {
		h.send(s.ID, fmt.Sprintf("fetch %d", i))
		h.waitTurns(s.ID, i+1)
	}
	h.send(s.ID, "fetch 9")
	s, evs := h.waitTurns(s.ID, 3)
	if s.Status != engine.StatusFailed {
		t.Fatalf("status %s:\n%s", s.Status, dump(evs))
	}
	errs := ofType(evs, engine.EventSessionError)
	e := payload[engine.SessionError](t, errs[len(errs)-1])
	if e.Code != engine.CodeContextTooLarge || !strings.Contains(e.Message, "already summarised") {
		t.Errorf("error %+v", e)
	}
	if n := count(evs, engine.EventContextCompacted); n != 1 {
		t.Errorf("%d compactions, want the one summary", n)
	}
}
