package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"brain/engine"
)

// readEvents reads server-sent events from resp until want returns true
// for one, returning the "event: data" lines it saw.
func readEvents(t *testing.T, sc *bufio.Scanner, want func(event, data string) bool) []string {
	t.Helper()
	var seen []string
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case line == "" && event != "":
			d := strings.Join(data, "\n")
			seen = append(seen, event+": "+d)
			if want(event, d) {
				return seen
			}
			event, data = "", nil
		}
	}
	t.Fatalf("stream ended (%v) before the wanted event; saw %q", sc.Err(), seen)
	return nil
}

func TestConsole_LiveTimeline(t *testing.T) {
	c := newConsole(t, Config{})
	c.eng.addSession(engine.Session{ID: "ses1", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	c.eng.appendEvent(t, "ses1", engine.Input{Text: "first"})
	c.get("/sessions/ses1") // a guest session, as a browser has

	// The deadline only stops a broken test from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.srv.URL+"/sessions/ses1/live?after=1", nil)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("live: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	c.eng.appendEvent(t, "ses1", engine.AgentMessage{Text: "**hi** <script>x()</script>\r\nline two"})
	seen := readEvents(t, sc, func(ev, data string) bool { return ev == "item" })
	item := seen[len(seen)-1]
	if !strings.Contains(item, `id="e2"`) || !strings.Contains(item, "<strong>hi</strong>") || strings.Contains(item, "<script") {
		t.Fatalf("item %q", item)
	}
	c.eng.appendEvent(t, "ses1", engine.SessionStatus{Status: engine.StatusRunning, Reason: engine.ReasonTurnStarted})
	seen = readEvents(t, sc, func(ev, data string) bool { return ev == "status" })
	if got := seen[len(seen)-1]; got != "status: running" {
		t.Fatalf("status event %q", got)
	}
}

func TestConsole_LiveNeedsAVisitor(t *testing.T) {
	c := newConsole(t, keyed())
	c.eng.addSession(engine.Session{ID: "ses1", Origin: engine.OriginAPI})
	if resp, _ := c.get("/sessions/ses1/live"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("live without a sign-in: %d", resp.StatusCode)
	}
}

// TestConsole_LiveDeltas: the text a model is writing reaches the live
// stream as JSON "delta" events (HTML escaped, one line), before the
// agent.message that replaces it, and the feed is closed with the stream.
func TestConsole_LiveDeltas(t *testing.T) {
	c := newConsole(t, Config{})
	c.eng.addSession(engine.Session{ID: "ses1", Origin: engine.OriginAPI, Status: engine.StatusRunning})
	c.eng.appendEvent(t, "ses1", engine.Input{Text: "first"})
	c.get("/sessions/ses1")

	// The deadline only stops a broken test from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.srv.URL+"/sessions/ses1/live?after=1", nil)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	// The feed is open once the stream is: nothing written from now on is
	// missed.
	hostile := "<script>alert(1)</script>\nline <b>two</b> & \"three\""
	if n := c.eng.publishDelta(engine.Delta{SessionID: "ses1", TurnID: "turn1", Text: hostile}); n != 1 {
		t.Fatalf("%d feeds watch the session once its live stream is open, want 1", n)
	}
	c.eng.publishDelta(engine.Delta{SessionID: "other", TurnID: "turn9", Text: "not this session's"})
	c.eng.appendEvent(t, "ses1", engine.AgentMessage{Text: "the whole answer"})
	seen := readEvents(t, sc, func(ev, data string) bool { return ev == "item" })
	if len(seen) != 2 || !strings.HasPrefix(seen[0], "delta: ") {
		t.Fatalf("want the delta, then the item; saw %q", seen)
	}
	data := strings.TrimPrefix(seen[0], "delta: ")
	if strings.ContainsAny(data, "<>&\n") {
		t.Fatalf("delta data is not escaped JSON on one line: %q", data)
	}
	var d struct {
		Turn  string
		Round int
		Text  string
	}
	if err := json.Unmarshal([]byte(data), &d); err != nil || d.Turn != "turn1" || d.Round != 0 || d.Text != hostile {
		t.Fatalf("delta %q decodes to %+v (%v)", data, d, err)
	}
	resp.Body.Close()
	cancel()
	// The handler closes its feed when the stream ends; wait for it, as
	// the server finishes the request on its own goroutine.
	deadline := time.Now().Add(time.Minute) // only stops a broken test from hanging
	for c.eng.watching() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the live stream's delta feed was not closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
