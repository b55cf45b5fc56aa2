package bot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

func TestWebTools_ThroughATurn(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"results":[{"title":"Brain docs","url":"http://%s/doc","content":"How brain works"}]}`, r.Host)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>Doc</title><script>evil()</script></head><body><h1>Brain</h1><p>Sessions are store.</p></body></html>`)
		}
	}))
	defer page.Close()
	extra := fmt.Sprintf(`    tools: [web_search_20250305, web_fetch]
tools:
  web_search: {provider: searxng, endpoint: %s}
  web_fetch: {allow_private: true}
`, page.URL)
	ta := newTestApp(t, extra, Options{})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{ID: "s1", Name: "web_search", Input: `{"query":"brain"}`}),
		fakemodel.ToolCalls(fakemodel.Call{ID: "f1", Name: "web_fetch", Input: fmt.Sprintf(`{"url":%q}`, page.URL+"/doc")}),
		fakemodel.Text("Sessions are store."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "how does brain work?")
	_, evs := ta.waitTurns(s.ID, 1)
	var texts []string
	for _, ev := range evs {
		if ev.Type != engine.EventToolResult {
			continue
		}
		d := payload[engine.ToolCallResult](t, ev)
		if d.Result.IsError {
			t.Fatalf("tool error: %s", ev.Data)
		}
		texts = append(texts, d.Result.Content[0].Text)
	}
	if len(texts) != 2 || !strings.Contains(texts[0], "Brain docs") || !strings.Contains(texts[1], "Sessions are store.") || strings.Contains(texts[1], "evil") {
		t.Fatalf("results %q", texts)
	}
}

func TestWebFetch_BlocksPrivateHostsByDefault(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a private address was fetched")
	}))
	defer page.Close()
	ta := newTestApp(t, "    tools: [web_fetch]\ntools:\n  web_fetch: {}\n", Options{})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "web_fetch", Input: fmt.Sprintf(`{"url":%q}`, page.URL)}),
		fakemodel.Text("Blocked."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "fetch it")
	_, evs := ta.waitTurns(s.ID, 1)
	for _, ev := range evs {
		if ev.Type == engine.EventToolResult && (!strings.Contains(string(ev.Data), "blocked_host") || !strings.Contains(string(ev.Data), `"is_error":true`)) {
			t.Fatalf("result %s", ev.Data)
		}
	}
}
