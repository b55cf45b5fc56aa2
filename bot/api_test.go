package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/api"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// waitTurns polls until n turns have completed and no turn runs.
func (ta *testApp) waitTurns(id string, n int) (engine.Session, []engine.Event) {
	ta.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		changed := ta.app.Engine().Changed(id)
		var s engine.Session
		ta.must(http.StatusOK, "GET", "/v1/sessions/"+id, nil, &s)
		evs := ta.events(id)
		if s.Status != engine.StatusRunning && countType(evs, engine.EventTurnCompleted) >= n {
			return s, evs
		}
		if time.Now().After(deadline) {
			ta.t.Fatalf("session %s: %d turns completed, status %s; want %d", id, countType(evs, engine.EventTurnCompleted), s.Status, n)
		}
		select {
		case <-changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestAPI_ConversationThroughHTTP(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	ta.fake.Push(fakemodel.Text("Hello, person."))
	var s api.SessionResponse
	ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "hi"}, &s)
	if s.Event == nil || s.Event.Type != engine.EventUserMessage || s.Event.Seq != 1 {
		t.Fatalf("create with message: %+v", s)
	}
	got, evs := ta.waitTurns(s.ID, 1)
	if got.Status != engine.StatusIdle || !got.Interactive || got.Origin != engine.OriginAPI {
		t.Fatalf("session %+v", got)
	}
	var agent engine.AgentMessage
	for _, ev := range evs {
		if ev.Type == engine.EventAgentMessage {
			agent = payload[engine.AgentMessage](t, ev)
		}
	}
	if agent.Text != "Hello, person." {
		t.Fatalf("agent.message %+v", agent)
	}
	// ?after= pages.
	var page struct{ Events []engine.Event }
	ta.must(http.StatusOK, "GET", fmt.Sprintf("/v1/sessions/%s/events?after=%d", s.ID, len(evs)-2), nil, &page)
	if len(page.Events) != 2 || page.Events[0].Seq != int64(len(evs)-1) {
		t.Fatalf("after page: %+v", page.Events)
	}
	// The raw JSON shape of an event.
	_, _, raw := ta.do("GET", "/v1/sessions/"+s.ID+"/events", nil)
	for _, key := range []string{`"seq":1`, `"type":"user.message"`, `"created_at":`, `"data":{`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("events JSON lacks %s: %s", key, raw)
		}
	}
	var list struct{ Sessions []engine.Session }
	ta.must(http.StatusOK, "GET", "/v1/sessions", nil, &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("list: %+v", list)
	}
	var results struct{ Results []any }
	ta.must(http.StatusOK, "GET", "/v1/sessions/"+s.ID+"/results", nil, &results)
	if results.Results == nil || len(results.Results) != 0 {
		t.Fatalf("results: %+v", results)
	}
}

func TestAPI_CreateSessionIdempotencyKey(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	body := map[string]any{"message": "once"}
	s1, h1, b1 := ta.do("POST", "/v1/sessions", body, "Idempotency-Key", "create-1")
	s2, _, b2 := ta.do("POST", "/v1/sessions", body, "Idempotency-Key", "create-1")
	if s1 != 201 || s2 != 200 {
		t.Fatalf("statuses %d %d: %s %s", s1, s2, b1, b2)
	}
	var r1, r2 api.SessionResponse
	_ = json.Unmarshal(b1, &r1)
	_ = json.Unmarshal(b2, &r2)
	if r1.ID != r2.ID || r1.Event.ID != r2.Event.ID {
		t.Fatalf("repeat created something new: %s vs %s", b1, b2)
	}
	if !hex32.MatchString(h1.Get("X-Request-ID")) {
		t.Fatalf("request id %q", h1.Get("X-Request-ID"))
	}
	_, evs := ta.waitTurns(r1.ID, 1)
	if countType(evs, engine.EventUserMessage) != 1 {
		t.Fatalf("events: %d user messages", countType(evs, engine.EventUserMessage))
	}
}

func TestAPI_ConcurrentDuplicateUserMessages(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	s := ta.createSession()
	const n = 20
	type answer struct {
		status int
		ev     engine.Event
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, body := ta.do("POST", "/v1/sessions/"+s.ID+"/events",
				map[string]any{"type": "user.message", "text": "do it once", "idempotency_key": "dup-key"})
			answers[i].status = status
			_ = json.Unmarshal(body, &answers[i].ev)
		}()
	}
	wg.Wait()
	accepted := 0
	for _, a := range answers {
		switch a.status {
		case http.StatusAccepted:
			accepted++
		case http.StatusOK:
		default:
			t.Fatalf("status %d", a.status)
		}
		if a.ev.ID != answers[0].ev.ID || a.ev.Seq != answers[0].ev.Seq {
			t.Fatalf("different events returned: %+v vs %+v", a.ev, answers[0].ev)
		}
	}
	if accepted != 1 {
		t.Fatalf("%d requests accepted as new, want 1", accepted)
	}
	_, evs := ta.waitTurns(s.ID, 1)
	if countType(evs, engine.EventUserMessage) != 1 || countType(evs, engine.EventTurnStarted) != 1 {
		t.Fatalf("%d messages, %d turns", countType(evs, engine.EventUserMessage), countType(evs, engine.EventTurnStarted))
	}
	if ta.fake.Received() != 1 {
		t.Fatalf("model called %d times", ta.fake.Received())
	}
}

func TestAPI_ProviderFailureResumeFlow(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	ta.fake.Push(fakemodel.Fail(500, "boom"))
	s := ta.createSession()
	var in engine.Event
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "hello"}, &in)
	ta.waitStatus(s.ID, engine.StatusInterrupted)

	status, _, body := ta.do("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "again"})
	if status != http.StatusConflict || !strings.Contains(string(body), `"code":"conflict"`) || !strings.Contains(string(body), "resume") {
		t.Fatalf("input to interrupted session: %d %s", status, body)
	}
	var resumed engine.Session
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/resume", nil, &resumed)
	if resumed.Status != engine.StatusIdle {
		t.Fatalf("after resume: %s", resumed.Status)
	}
	ta.fake.Push(fakemodel.Text("back"))
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "again"}, nil)
	got, _ := ta.waitTurns(s.ID, 2)
	if got.Status != engine.StatusIdle {
		t.Fatalf("status %s", got.Status)
	}
}

func TestAPI_CancelRunningTurn(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	ta.fake.Push(fakemodel.Hold())
	s := ta.createSession()
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "long job"}, nil)
	ta.waitStatus(s.ID, engine.StatusRunning)
	var got engine.Session
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/cancel", nil, &got)
	if got.Status != engine.StatusIdle {
		t.Fatalf("after cancel: %s", got.Status)
	}
}

func TestAPI_ErrorEnvelopes(t *testing.T) {
	ta := newTestApp(t, "api_keys: [secret-api-key-1-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f]\nlimits: {max_body_bytes: 512, max_running_turns: 1, max_queued_turns: 1}\n", Options{})
	ta.fake.Push(fakemodel.Hold())
	busy := ta.createSession()
	queued := ta.createSession()
	full := ta.createSession()
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+busy.ID+"/events", map[string]any{"type": "user.message", "text": "runs"}, nil)
	ta.waitStatus(busy.ID, engine.StatusRunning)
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+queued.ID+"/events", map[string]any{"type": "user.message", "text": "waits"}, nil)

	msg := func(text string) map[string]any { return map[string]any{"type": "user.message", "text": text} }
	cases := []struct {
		name, method, path string
		body               any
		hdr                []string
		status             int
		code               string
	}{
		{"bad json", "POST", "/v1/sessions/" + busy.ID + "/events", `{"type":`, nil, 400, "invalid_request"},
		{"unknown field", "POST", "/v1/sessions/" + busy.ID + "/events", `{"type":"user.message","text":"x","bogus":1}`, nil, 400, "invalid_request"},
		{"wrong type", "POST", "/v1/sessions/" + busy.ID + "/events", `{"type":"agent.message","text":"x"}`, nil, 400, "invalid_request"},
		{"missing text", "POST", "/v1/sessions/" + busy.ID + "/events", `{"type":"user.message"}`, nil, 400, "invalid_request"},
		{"field type", "POST", "/v1/sessions", `{"interactive":"yes"}`, nil, 400, "invalid_request"},
		{"unknown agent", "POST", "/v1/sessions", `{"agent":"nobody"}`, nil, 400, "invalid_request"},
		{"bad after", "GET", "/v1/sessions/" + busy.ID + "/events?after=-1", nil, nil, 400, "invalid_request"},
		{"no key", "GET", "/v1/sessions", nil, []string{"Authorization", ""}, 401, "unauthorized"},
		{"wrong key", "GET", "/v1/sessions", nil, []string{"Authorization", "Bearer nope"}, 401, "unauthorized"},
		{"unknown session", "GET", "/v1/sessions/ses_missing", nil, nil, 404, "not_found"},
		{"unknown route", "GET", "/v2/nothing", nil, nil, 404, "not_found"},
		{"method", "DELETE", "/v1/sessions", nil, nil, 405, "method_not_allowed"},
		{"too large", "POST", "/v1/sessions/" + busy.ID + "/events", msg(strings.Repeat("x", 600)), nil, 413, "too_large"},
		{"overloaded", "POST", "/v1/sessions/" + full.ID + "/events", msg("no room"), nil, 429, "overloaded"},
		{"resume running", "POST", "/v1/sessions/" + busy.ID + "/resume", nil, nil, 409, "conflict"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, body := ta.do(c.method, c.path, c.body, c.hdr...)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			var env api.ErrorEnvelope
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatalf("not an envelope: %s", body)
			}
			id := hdr.Get("X-Request-ID")
			if !hex32.MatchString(id) || env.RequestID != id {
				t.Fatalf("request id header %q body %q", id, env.RequestID)
			}
			if env.Error.Code != c.code || env.Error.Message == "" {
				t.Fatalf("error %+v, want code %s", env.Error, c.code)
			}
			if c.status == 429 && hdr.Get("Retry-After") != "1" {
				t.Fatalf("Retry-After %q", hdr.Get("Retry-After"))
			}
		})
	}
	// Nothing was stored for the refused input.
	if evs := ta.events(full.ID); len(evs) != 0 {
		t.Fatalf("refused input stored: %+v", evs)
	}
	// healthz needs no key.
	ta.key = ""
	if status, hdr, _ := ta.do("GET", "/healthz", nil); status != 200 || !hex32.MatchString(hdr.Get("X-Request-ID")) {
		t.Fatalf("healthz %d", status)
	}
}

func TestAPI_InternalErrorIsLoggedWithRequestID(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	s := ta.createSession()
	// Break the database under the running app.
	if err := ta.app.store.Close(); err != nil {
		t.Fatal(err)
	}
	status, hdr, body := ta.do("GET", "/v1/sessions/"+s.ID, nil)
	if status != 500 {
		t.Fatalf("status %d: %s", status, body)
	}
	var env api.ErrorEnvelope
	_ = json.Unmarshal(body, &env)
	if env.Error.Code != "internal" || env.Error.Message != "internal error" || env.RequestID != hdr.Get("X-Request-ID") {
		t.Fatalf("envelope %s", body)
	}
	logs := ta.logs.String()
	if !strings.Contains(logs, "request failed") || !strings.Contains(logs, "request_id="+env.RequestID) {
		t.Fatalf("log lacks the failure with its request id:\n%s", logs)
	}
}

func TestAPI_EventStreamResumesFromLastEventID(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	ta.fake.Push(fakemodel.Text("first"), fakemodel.Text("second"))
	s := ta.createSession()
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "one"}, nil)
	_, evs := ta.waitTurns(s.ID, 1)
	last := evs[len(evs)-1].Seq

	req, _ := http.NewRequest("GET", ta.base+"/v1/sessions/"+s.ID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", fmt.Sprint(last))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "two"}, nil)

	// Read frames until the second turn completes; the first must be last+1.
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 1024)
	for !strings.Contains(string(buf), "event: turn.completed") {
		n, err := resp.Body.Read(chunk)
		if err != nil {
			t.Fatalf("stream ended: %v\n%s", err, buf)
		}
		buf = append(buf, chunk[:n]...)
	}
	if !strings.HasPrefix(string(buf), fmt.Sprintf("id: %d\nevent: user.message\n", last+1)) {
		t.Fatalf("stream did not start after Last-Event-ID %d:\n%s", last, buf)
	}
	if strings.Contains(string(buf), fmt.Sprintf("id: %d\n", last)) {
		t.Fatalf("stream repeated an event already seen:\n%s", buf)
	}
}

func TestAPI_IdempotencyKeyReusedWithAnotherBodyIs422(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	body := map[string]any{"message": "once", "started_by": "ann"}
	if s, _, b := ta.do("POST", "/v1/sessions", body, "Idempotency-Key", "create-9"); s != 201 {
		t.Fatalf("%d %s", s, b)
	}
	for name, other := range map[string]map[string]any{
		"another message": {"message": "twice", "started_by": "ann"},
		"another starter": {"message": "once", "started_by": "bob"},
	} {
		status, _, b := ta.do("POST", "/v1/sessions", other, "Idempotency-Key", "create-9")
		var env api.ErrorEnvelope
		_ = json.Unmarshal(b, &env)
		if status != http.StatusUnprocessableEntity || env.Error.Code != "idempotency_mismatch" {
			t.Errorf("%s: %d %s", name, status, b)
		}
	}
	s := ta.createSession()
	msg := map[string]any{"type": "user.message", "text": "deploy", "idempotency_key": "k-1"}
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", msg, nil)
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/events", msg, nil) // the same body: a replay
	status, _, b := ta.do("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "rollback", "idempotency_key": "k-1"})
	var env api.ErrorEnvelope
	_ = json.Unmarshal(b, &env)
	if status != http.StatusUnprocessableEntity || env.Error.Code != "idempotency_mismatch" || !strings.Contains(env.Error.Message, "k-1") {
		t.Fatalf("reused key: %d %s", status, b)
	}
}
