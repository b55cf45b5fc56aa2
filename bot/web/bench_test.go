package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"brain/engine"
)

// BenchmarkSessionPage_2000Events renders a session page whose timeline
// holds 2,000 events: messages with Markdown, tool calls and results.
func BenchmarkSessionPage_2000Events(b *testing.B) {
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
	h := s.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", "/sessions/ses1", nil)
		req.RemoteAddr = "127.0.0.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
		b.SetBytes(int64(w.Body.Len()))
	}
}
