package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"brain/engine"
)

// benchConsole is a console over a session of 2,000 events: messages
// with Markdown, tool calls and their results.
func benchConsole(b *testing.B) *Server {
	b.Helper()
	eng := newFakeEngine()
	eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	for i := 0; len(eng.events["ses1"]) < 2000; i++ {
		eng.appendEvent(b, "ses1", engine.Input{Text: fmt.Sprintf("Please look at **item %d** and [its page](https://example.com/%d).", i, i), Author: "ops"})
		eng.appendEvent(b, "ses1", engine.ToolCall{ID: fmt.Sprint("c", i), Name: "lookup", Input: mustJSON(map[string]any{"id": i, "deep": true})})
		eng.appendEvent(b, "ses1", engine.ToolCallResult{CallID: fmt.Sprint("c", i), Name: "lookup", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: `{"status":"open","owner":"ada"}`}}}})
		eng.appendEvent(b, "ses1", engine.AgentMessage{Text: fmt.Sprintf("Item %d is *open*:\n\n- owner: ada\n- `status`: open", i)})
	}
	s, err := New(Config{Engine: eng, Schedules: &fakeSchedules{}})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func getPage(b *testing.B, h http.Handler) {
	req := httptest.NewRequest("GET", "/sessions/ses1", nil)
	req.RemoteAddr = "127.0.0.1:1234"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("status %d", w.Code)
	}
	b.SetBytes(int64(w.Body.Len()))
}

// BenchmarkSessionPage_2000Events renders the page of a session of 2,000
// events that nobody opened before: every entry rendered (Markdown too).
func BenchmarkSessionPage_2000Events(b *testing.B) {
	s := benchConsole(b)
	b.ReportAllocs()
	for b.Loop() {
		s.pages.cache.reset()
		getPage(b, s.Handler())
	}
}

// BenchmarkSessionPage_2000EventsCached renders it again: the entries,
// which never change, come from the cache.
func BenchmarkSessionPage_2000EventsCached(b *testing.B) {
	s := benchConsole(b)
	getPage(b, s.Handler())
	b.ReportAllocs()
	for b.Loop() {
		getPage(b, s.Handler())
	}
}

// BenchmarkFloor_Template2000Items is the floor: html/template writing a
// list of 2,000 short escaped entries, with no store, Markdown or layout.
func BenchmarkFloor_Template2000Items(b *testing.B) {
	t := template.Must(template.New("floor").Parse(`<ol>{{range .}}<li id="e{{.Seq}}"><b>{{.Title}}</b> <time>{{.At}}</time><p>{{.Text}}</p></li>{{end}}</ol>`))
	type row struct {
		Seq             int
		Title, At, Text string
	}
	rows := make([]row, 2000)
	for i := range rows {
		rows[i] = row{Seq: i, Title: "agent", At: "2026-12-01 09:00:00 UTC", Text: fmt.Sprintf("Item %d is open: owner ada", i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := t.Execute(io.Discard, rows); err != nil {
			b.Fatal(err)
		}
	}
}

// The floors of bench/console's BenchmarkConsole_100kSessions: the same
// pages' templates executed with their rows already in memory, so no
// store, no trace building and no Markdown, only html/template.

// BenchmarkFloor_SessionsTemplate writes the sessions list page of 25 rows.
func BenchmarkFloor_SessionsTemplate(b *testing.B) {
	s := benchConsole(b)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rows := make([]sessionRow, pageSize)
	for i := range rows {
		rows[i] = sessionRow{Session: engine.Session{ID: fmt.Sprintf("ses_1_%d", i), Agent: "a", Origin: engine.OriginAPI,
			Status: engine.StatusIdle, StartedBy: "ada", CreatedAt: at, UpdatedAt: at, LastSeq: 7},
			Title: fmt.Sprintf("Please look at the refund of zqxorder%d (turn 0).", i)}
	}
	vw := view{Page: "sessions", Open: true, Admin: true, Data: sessionsView{Rows: rows, Statuses: sessionStatuses, Origins: s.origins()}}
	floorExecute(b, s, "sessions", vw)
}

// oneToolTurns calls add with the events of completed one-tool turns
// (7 events each, as bench/console's long session has) until n events.
func oneToolTurns(n int, add func(turnID string, p engine.Payload)) {
	for t, seq := 0, 0; seq < n; t, seq = t+1, seq+7 {
		turn, call := fmt.Sprint("turn", t), fmt.Sprint("call", t)
		add("", engine.Input{Text: fmt.Sprintf("Please look at the refund of zqxorder (turn %d).", t), Author: "ada"})
		add(turn, engine.TurnStarted{InputIDs: []string{fmt.Sprint("ev", seq+1)}})
		add(turn, engine.ToolCall{ID: call, Name: "lookup", Input: json.RawMessage(fmt.Sprintf(`{"order":%d,"deep":true}`, t))})
		add(turn, engine.ToolCallResult{CallID: call, Name: "lookup", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: `{"status":"open","owner":"ada"}`}}}})
		add(turn, engine.AgentMessage{Text: fmt.Sprintf("Order %d is *open*; the owner is ada.", t)})
		add(turn, engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Rounds: 1, Usage: engine.Usage{InputTokens: 100, OutputTokens: 20}})
		add(turn, engine.SessionStatus{Status: engine.StatusIdle, Reason: "turn_completed"})
	}
}

// BenchmarkSessionPage_Trace2000Events renders the trace of a session
// of 2,000 events of one-tool turns, as every view does (the trace is
// built and rendered each time; only raw events are cached).
func BenchmarkSessionPage_Trace2000Events(b *testing.B) {
	eng := newFakeEngine()
	eng.addSession(engine.Session{ID: "ses1", Agent: "a", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	oneToolTurns(timelineWindow, func(turn string, p engine.Payload) { eng.appendTurnEvent(b, "ses1", turn, p) })
	s, err := New(Config{Engine: eng, Schedules: &fakeSchedules{}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		getPage(b, s.Handler())
	}
}

// BenchmarkFloor_SessionTemplate2000Events writes a session page whose
// trace (the last 2,000 events: 286 one-tool turns, as bench/console's
// long session shows) is already built in memory: the entries' templates
// and the page's, with no store, no decoding and no tracing.
func BenchmarkFloor_SessionTemplate2000Events(b *testing.B) {
	s := benchConsole(b)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tr := newTracer(s.pricer("a"))
	var seq int64
	oneToolTurns(timelineWindow, func(turn string, p engine.Payload) {
		ev, err := engine.NewEvent(p)
		if err != nil {
			b.Fatal(err)
		}
		seq++
		ev.Seq, ev.ID, ev.TurnID, ev.CreatedAt = seq, fmt.Sprint("ev", seq), turn, at.Add(time.Duration(seq)*time.Second)
		tr.add(ev)
	})
	ss := engine.Session{ID: "ses_big", Agent: "a", Origin: engine.OriginAPI, Status: engine.StatusIdle, StartedBy: "ada", CreatedAt: at, UpdatedAt: at, LastSeq: seq}
	vw := sessionView{Session: ss, Title: "Please look at the refund of zqxorder (turn 0).", After: seq, TurnFrom: seq,
		Header: headerView{Session: ss, Usage: engine.Usage{InputTokens: 100, OutputTokens: 20}}}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		// The entries' templates and the page's, nothing else.
		vw.Items = vw.Items[:0]
		for i := range tr.entries {
			h, err := s.pages.renderEntryUncached(&tr.entries[i])
			if err != nil {
				b.Fatal(err)
			}
			vw.Items = append(vw.Items, h)
		}
		buf.Reset()
		if err := s.pages.byName["session"].ExecuteTemplate(&buf, "layout", view{Page: "session", Open: true, Admin: true, Data: vw}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func floorExecute(b *testing.B, s *Server, page string, vw view) {
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := s.pages.byName[page].ExecuteTemplate(&buf, "layout", vw); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
