package web

import (
	"strings"
	"testing"

	"brain/engine"
)

// TestConsole_FinishedTurnCached: a finished turn's entry is rendered
// once and served from the cache on the next view; an event added to
// that turn later names another entry, so the page never shows a stale
// turn, and a running turn is never cached.
func TestConsole_FinishedTurnCached(t *testing.T) {
	c := newConsole(t, Config{})
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusIdle})
	turnWithTwoTools(t, c.eng, "ses1")
	turnKeys := func() (n int) {
		c.s.pages.cache.mu.Lock()
		defer c.s.pages.cache.mu.Unlock()
		for k := range c.s.pages.cache.html {
			if strings.HasPrefix(k, "turn ") {
				n++
			}
		}
		return n
	}
	_, first := c.get("/sessions/ses1")
	if n := turnKeys(); n != 1 {
		t.Fatalf("%d cached turn entries after the first view, want 1", n)
	}
	_, second := c.get("/sessions/ses1")
	if turnOf(first) == "" || turnOf(first) != turnOf(second) || turnKeys() != 1 {
		t.Fatalf("the second view differs or cached again (%d entries)", turnKeys())
	}
	// A late event of the finished turn: a new entry, shown.
	c.eng.appendTurnEvent(t, "ses1", "turn1", engine.AgentMessage{Text: "One more *note*."})
	if _, page := c.get("/sessions/ses1"); !strings.Contains(page, "<em>note</em>") {
		t.Fatal("the turn's late event is not shown: a stale entry was served")
	}
	// A running turn is rendered each time, never kept.
	c.eng.appendEvent(t, "ses1", engine.Input{Text: "and now?", Author: "ops"})
	c.eng.appendTurnEvent(t, "ses1", "turn2", engine.TurnStarted{})
	c.get("/sessions/ses1")
	if n := turnKeys(); n != 2 {
		t.Fatalf("%d cached turn entries, want 2 (the running turn uncached)", n)
	}
}

// turnOf is the turn1 entry's HTML in a page.
func turnOf(page string) string {
	i := strings.Index(page, `id="turn-turn1"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</details>")
	if j < 0 {
		return ""
	}
	return page[i : i+j]
}
