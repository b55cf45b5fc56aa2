package bot

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

const annKey = "ann-console-key-0123456789abcdef0123456789abcdef"

// consoleBrowser signs in to the console with an API key and returns the
// browser and a function that starts a console session with a message.
func consoleBrowser(t *testing.T, base, key string) func(text string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	csrfRE := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	csrf := func(path string) string {
		t.Helper()
		resp, err := browser.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := csrfRE.FindSubmatch(page)
		if m == nil {
			t.Fatalf("no csrf token on %s: %d %.300s", path, resp.StatusCode, page)
		}
		return string(m[1])
	}
	post := func(path string, form url.Values) {
		t.Helper()
		resp, err := browser.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			t.Fatalf("POST %s: %d %.300s", path, resp.StatusCode, body)
		}
	}
	post("/login", url.Values{"csrf": {csrf("/login")}, "key": {key}, "next": {"/sessions"}})
	return func(text string) {
		t.Helper()
		post("/sessions", url.Values{"csrf": {csrf("/sessions")}, "text": {text}})
	}
}

// TestMemory_PersonFollowsLinkedIdentities: once an admin links Ann's
// Slack user and her console sign-in to one person, what she told the
// agent in Slack is in her person memory when she starts a session in the
// console; Bob, whose identities are not linked, sees his own.
func TestMemory_PersonFollowsLinkedIdentities(t *testing.T) {
	sa := newSlackAppAgent(t, "    memory: {scopes: [person]}\n",
		"api_keys:\n  - {name: ann, key: "+annKey+"}\n  - {name: ops, key: "+memoryKey+"}\n")
	sa.key = memoryKey
	sa.must(http.StatusOK, "POST", "/v1/people", map[string]any{"id": "ann", "name": "Ann"}, nil)
	sa.must(http.StatusOK, "POST", "/v1/people/ann/identities", map[string]any{"surface": "slack", "external_id": "U1"}, nil)
	sa.must(http.StatusOK, "POST", "/v1/people/ann/identities", map[string]any{"surface": "console", "external_id": "ann"}, nil)

	const fact = "I review deploys for the payments team."
	create := fmt.Sprintf(`{"command":"create","path":"/memories/person/me.md","file_text":%q}`, fact)
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: create}), fakemodel.Text("Noted."))
	res, changes := sa.memoryResults("C1", sa.mentionIn("C1", "Ev1", "U1", "<@UBOT> remember: "+fact))
	if len(res) != 1 || res[0].Result.IsError || len(changes) != 1 || changes[0].Scope != "person:id:ann" {
		t.Fatalf("create in Slack: results %+v, changes %+v; want the scope person:id:ann", res, changes)
	}
	// Bob is not linked: his memory is his Slack identity's, without Ann's file.
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: `{"command":"view","path":"/memories/person"}`}), fakemodel.Text("Bob."))
	res, _ = sa.memoryResults("C1", sa.mentionIn("C1", "Ev2", "U2", "<@UBOT> what do you know about me?"))
	if len(res) != 1 || res[0].Result.IsError || strings.Contains(res[0].Result.Text(), "me.md") {
		t.Fatalf("Bob's view = %+v; want his own empty directory", res)
	}

	// Ann, in the console.
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: `{"command":"view","path":"/memories/person/me.md"}`}), fakemodel.Text("You review deploys."))
	consoleBrowser(t, sa.base, annKey)("what do I do here?")
	seen := map[string]bool{}
	res = consoleMemoryResults(t, sa.testApp, "ann", seen)
	if len(res) != 1 || res[0].Result.IsError || !strings.Contains(res[0].Result.Text(), fact) {
		t.Fatalf("Ann's view in the console = %+v; want her Slack fact", res)
	}
	// Unlinked, the console sign-in has a memory of its own again.
	sa.must(http.StatusNoContent, "DELETE", "/v1/people/ann", nil, nil)
	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: `{"command":"view","path":"/memories/person/me.md"}`}), fakemodel.Text("Nothing."))
	consoleBrowser(t, sa.base, annKey)("and now?")
	if res := consoleMemoryResults(t, sa.testApp, "ann", seen); len(res) != 1 || !res[0].Result.IsError || strings.Contains(res[0].Result.Text(), fact) {
		t.Fatalf("after the person was erased = %+v; want no such file", res)
	}
}

// consoleMemoryResults waits for a console session started by by and not
// in seen to finish a turn, adds it to seen and returns its memory tool
// results.
func consoleMemoryResults(t *testing.T, ta *testApp, by string, seen map[string]bool) []engine.ToolCallResult {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ss, err := ta.app.store.Sessions(ctx, engine.SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var newest *engine.Session
		for i, s := range ss {
			if s.Origin == engine.OriginConsole && s.StartedBy == by && !seen[s.ID] {
				newest = &ss[i]
			}
		}
		if newest != nil {
			var out []engine.ToolCallResult
			done := false
			for _, ev := range ta.events(newest.ID) {
				p, _ := ev.Decode()
				switch p := p.(type) {
				case engine.ToolCallResult:
					if p.Name == "memory" {
						out = append(out, p)
					}
				case engine.TurnCompleted:
					done = true
				}
			}
			if done {
				seen[newest.ID] = true
				return out
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished console session of %s", by)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
