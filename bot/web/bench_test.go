package web

import (
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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
