package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"brain/bot/api"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// mustHdr is must with request headers.
func (ta *testApp) mustHdr(want int, method, path string, body, out any, hdr ...string) {
	ta.t.Helper()
	status, _, data := ta.do(method, path, body, hdr...)
	if status != want {
		ta.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			ta.t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

// A POST /v1/sessions refused with 429 stores nothing, and a repeat with
// an idempotency key is answered with what was recorded, queue full or not.
func TestAPI_OverloadedStoresNothingAndRepeatsAnswer(t *testing.T) {
	ta := newTestApp(t, "limits: {max_running_turns: 1, max_queued_turns: 1}\n", Options{})
	// Session done: a first message and a second one, both answered.
	var done api.SessionResponse
	ta.mustHdr(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "first"}, &done, "Idempotency-Key", "create-done")
	ta.waitTurns(done.ID, 1)
	var second engine.Event
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+done.ID+"/events",
		map[string]any{"type": "user.message", "text": "second", "idempotency_key": "second-1"}, &second)
	ta.waitTurns(done.ID, 2)

	// Fill the pool: one turn runs, one waits.
	ta.fake.Push(fakemodel.Hold())
	held := len(ta.fake.Requests()) + 1
	busy := ta.createSession()
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+busy.ID+"/events", map[string]any{"type": "user.message", "text": "runs"}, nil)
	ta.waitStatus(busy.ID, engine.StatusRunning)
	// Running is set before the model call: Release only frees a request
	// that has taken the Hold, so wait for it to arrive (it stayed held
	// forever once, CI failing on this test).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := ta.fake.WaitRequests(ctx, held); err != nil {
		t.Fatalf("the busy turn's model call did not arrive: %v", err)
	}
	waiting := ta.createSession()
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+waiting.ID+"/events", map[string]any{"type": "user.message", "text": "waits"}, nil)
	sessions := func() int {
		var list struct{ Sessions []engine.Session }
		ta.must(http.StatusOK, "GET", "/v1/sessions", nil, &list)
		return len(list.Sessions)
	}
	before := sessions()

	// New sessions with a first message are refused and leave nothing.
	for _, key := range []string{"", "create-new"} {
		status, hdr, body := ta.do("POST", "/v1/sessions", map[string]any{"message": "no room"}, "Idempotency-Key", key)
		if status != http.StatusTooManyRequests || hdr.Get("Retry-After") != "1" || !strings.Contains(string(body), `"overloaded"`) {
			t.Fatalf("create with key %q: %d %s", key, status, body)
		}
	}
	if n := sessions(); n != before {
		t.Fatalf("a refused create stored %d sessions", n-before)
	}
	// Repeats are answered with the original events.
	var again api.SessionResponse
	ta.mustHdr(http.StatusOK, "POST", "/v1/sessions", map[string]any{"message": "first"}, &again, "Idempotency-Key", "create-done")
	if again.ID != done.ID || again.Event == nil || again.Event.ID != done.Event.ID {
		t.Fatalf("repeated create: %+v, want session %s event %s", again, done.ID, done.Event.ID)
	}
	var dup engine.Event
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+done.ID+"/events",
		map[string]any{"type": "user.message", "text": "second", "idempotency_key": "second-1"}, &dup)
	if dup.ID != second.ID {
		t.Fatalf("repeated message: %+v, want %s", dup, second.ID)
	}
	// The refused key is free once there is room.
	ta.fake.Release()
	ta.waitTurns(busy.ID, 1)
	ta.waitTurns(waiting.ID, 1)
	ta.mustHdr(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "room now"}, nil, "Idempotency-Key", "create-new")
}

// POST /v1/sessions/{id}/resume with {"retry": true} runs the input a
// failure left unanswered again, once; no body or {} is a plain resume.
func TestAPI_ResumeWithRetry(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	ta.fake.Push(fakemodel.Fail(401, "invalid x-api-key"))
	var s api.SessionResponse
	ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "deploy"}, &s)
	ta.waitStatus(s.ID, engine.StatusFailed)

	for _, body := range []any{`{"retry":1}`, `{"retry":true,"bogus":1}`, `[]`} {
		if status, _, data := ta.do("POST", "/v1/sessions/"+s.ID+"/resume", body); status != http.StatusBadRequest {
			t.Fatalf("resume %s: %d %s", body, status, data)
		}
	}
	ta.fake.Push(fakemodel.Text("deployed"))
	var r api.ResumeResponse
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/resume", map[string]any{"retry": true}, &r)
	if r.Status != engine.StatusIdle && r.Status != engine.StatusRunning || len(r.Retried) != 1 {
		t.Fatalf("resume with retry: %+v", r)
	}
	in := payload[engine.Input](t, r.Retried[0])
	if in.Text != "deploy" || in.RetryOf != s.Event.ID || !hex32.MatchString(in.RequestID) {
		t.Fatalf("retried input %s", r.Retried[0].Data)
	}
	got, evs := ta.waitTurns(s.ID, 2)
	if got.Status != engine.StatusIdle || countType(evs, engine.EventUserMessage) != 2 {
		t.Fatalf("after retry: %s\n%+v", got.Status, evs)
	}
	// Again: nothing more runs.
	var raw json.RawMessage
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/resume", map[string]any{"retry": true}, &raw)
	if strings.Contains(string(raw), `"retried"`) {
		t.Fatalf("second retry queued input: %s", raw)
	}
	// Without a body, or with {}, resume is the plain one.
	ta.fake.Push(fakemodel.Fail(401, "invalid x-api-key"), fakemodel.Fail(401, "invalid x-api-key"))
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "again"}, nil)
	ta.waitStatus(s.ID, engine.StatusFailed)
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/resume", nil, &raw)
	if strings.Contains(string(raw), `"retried"`) || !strings.Contains(string(raw), `"status":"idle"`) {
		t.Fatalf("plain resume: %s", raw)
	}
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/resume", `{}`, &raw)
	if evs := ta.events(s.ID); countType(evs, engine.EventUserMessage) != 3 {
		t.Fatalf("a plain resume queued input: %d user messages", countType(evs, engine.EventUserMessage))
	}
}

// A provider error that echoes the configured model key: the key is in no
// event, no API response and no log line.
func TestAPI_ProviderErrorEchoingTheKeyIsScrubbed(t *testing.T) {
	const key = "test-model-key" // writeConfig's models.default.api_key
	ta := newTestApp(t, "", Options{})
	ta.fake.Push(fakemodel.Fail(401, "invalid x-api-key "+key+" (sent as x-api-key: "+key+")"))
	var s api.SessionResponse
	ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "hi"}, &s)
	ta.waitStatus(s.ID, engine.StatusFailed)
	if got := ta.fake.Requests(); len(got) == 0 || got[0].APIKey != key {
		t.Fatalf("the model was not called with the key")
	}
	var bodies []string
	for _, path := range []string{"/v1/sessions/" + s.ID + "/events", "/v1/sessions/" + s.ID, "/v1/sessions"} {
		_, _, body := ta.do("GET", path, nil)
		bodies = append(bodies, string(body))
	}
	_, _, body := ta.do("POST", "/v1/sessions/"+s.ID+"/resume", map[string]any{"retry": true})
	bodies = append(bodies, string(body))
	for i, b := range bodies {
		if strings.Contains(b, key) {
			t.Errorf("response %d holds the key: %s", i, b)
		}
	}
	if !strings.Contains(bodies[0], "provider_auth") || !strings.Contains(bodies[0], "[REDACTED]") {
		t.Errorf("the error is not reported: %s", bodies[0])
	}
	if strings.Contains(ta.logs.String(), key) {
		t.Errorf("the log holds the key:\n%s", ta.logs.String())
	}
}

// when: blocks may name ask, as seed 002's example offers ask only to the
// turns that propose.
func TestAPI_ConditionalAsk(t *testing.T) {
	ta := newTestApp(t, "    when:\n      - input_matches: \"(?i)propose\"\n        tools: [ask]\n", Options{})
	var s api.SessionResponse
	ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "just do it"}, &s)
	ta.waitTurns(s.ID, 1)
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "Propose an approach"}, nil)
	ta.waitTurns(s.ID, 2)
	reqs := ta.fake.Requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 0 || len(reqs[1].Tools) != 1 || reqs[1].Tools[0] != "ask" {
		t.Fatalf("tools offered: %v, %v", reqs[0].Tools, reqs[len(reqs)-1].Tools)
	}
}

// A misconfigured search provider (a refused key) is logged once per
// cause, without the key, however many calls it fails.
func TestWebSearch_MisconfiguredProviderIsLoggedOnce(t *testing.T) {
	const searchKey = "brave-key-that-is-refused"
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"invalid token %s"}`, r.Header.Get("X-Subscription-Token"))
	}))
	defer provider.Close()
	extra := fmt.Sprintf("    tools: [web_search]\ntools:\n  web_search: {provider: brave, api_key: %s, endpoint: %s}\n", searchKey, provider.URL)
	ta := newTestApp(t, extra, Options{})
	search := fakemodel.Call{Name: "web_search", Input: `{"query":"brain"}`}
	ta.fake.Push(fakemodel.ToolCalls(search, search), fakemodel.ToolCalls(search), fakemodel.Text("no luck"))
	s := ta.createSession()
	ta.sendMessage(s.ID, "search twice")
	ta.waitTurns(s.ID, 1)
	ta.fake.Push(fakemodel.ToolCalls(search), fakemodel.Text("still no luck"))
	ta.sendMessage(s.ID, "and again")
	_, evs := ta.waitTurns(s.ID, 2)
	if n := countType(evs, engine.EventToolResult); n != 4 {
		t.Fatalf("%d tool results", n)
	}
	logs := ta.logs.String()
	if n := strings.Count(logs, "a tool is misconfigured"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, "HTTP 401") || strings.Contains(logs, searchKey) {
		t.Fatalf("the log line does not name the cause, or holds the key:\n%s", logs)
	}
}
