package linearfake

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	token   = "oauth-token"
	session = "s-1"
	id1     = "6ba7b810-9dad-41d1-80b4-00c04fd430c8"
	id2     = "0f0e0d0c-0b0a-4908-8706-050403020100"
	create  = `mutation AgentActivityCreate($input: AgentActivityCreateInput!) { agentActivityCreate(input: $input) { success agentActivity { id } } }`
	update  = `mutation AgentSessionUpdate($id: String!, $input: AgentSessionUpdateInput!) { agentSessionUpdate(id: $id, input: $input) { success } }`
)

type answer struct {
	Status int
	Header http.Header
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
	raw string
}

// post sends a GraphQL request the way a client would.
func post(t *testing.T, s *Server, auth, query, variables string) answer {
	t.Helper()
	body := `{"query":` + quoteJSON(query) + `,"variables":` + variables + `}`
	req, err := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, Header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a)
	return a
}

func (a answer) code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	return a.Errors[0].Extensions.Code
}

func activityVars(input string) string { return `{"input":` + input + `}` }

func newServer(t *testing.T) *Server {
	t.Helper()
	s := New(token)
	t.Cleanup(s.Close)
	return s
}

func TestServer_CreateAndIdempotency(t *testing.T) {
	s := newServer(t)
	in := `{"id":"` + id1 + `","agentSessionId":"` + session + `","content":{"type":"thought","body":"hi"},"ephemeral":true}`
	for i := 0; i < 2; i++ {
		a := post(t, s, "Bearer "+token, create, activityVars(in))
		if a.Status != 200 || a.code() != "" || !strings.Contains(string(a.Data["agentActivityCreate"]), id1) {
			t.Fatalf("try %d: %d %s", i, a.Status, a.raw)
		}
	}
	acts := s.Activities(session)
	if len(acts) != 1 || acts[0].ID != id1 || acts[0].Type != "thought" || acts[0].Body != "hi" || !acts[0].Ephemeral {
		t.Fatalf("activities %+v", acts)
	}
	// The same id under another session is refused.
	other := strings.Replace(in, session, "s-2", 1)
	if a := post(t, s, "Bearer "+token, create, activityVars(other)); a.code() != codeInvalid {
		t.Fatalf("reused id: %s", a.raw)
	}
	// Without an id the fake makes one up.
	a := post(t, s, "Bearer "+token, create, activityVars(`{"agentSessionId":"`+session+`","content":{"type":"response","body":"done"}}`))
	if a.code() != "" || len(s.Activities(session)) != 2 || s.Activities(session)[1].ClientID != "" {
		t.Fatalf("%s %+v", a.raw, s.Activities(session))
	}
}

func TestServer_Auth(t *testing.T) {
	s := newServer(t)
	in := activityVars(`{"agentSessionId":"s","content":{"type":"thought","body":"x"}}`)
	for _, auth := range []string{"", token, "Bearer other", "Bearer  " + token, "Basic " + token} {
		if a := post(t, s, auth, create, in); a.Status != http.StatusUnauthorized || a.code() != codeAuth {
			t.Fatalf("auth %q: %d %s", auth, a.Status, a.raw)
		}
	}
	key := New("lin_api_k")
	defer key.Close()
	if a := post(t, key, "lin_api_k", create, in); a.Status != 200 {
		t.Fatalf("api key: %s", a.raw)
	}
	if a := post(t, key, "Bearer lin_api_k", create, in); a.Status != http.StatusUnauthorized {
		t.Fatalf("bearer api key accepted: %s", a.raw)
	}
	if len(s.Activities("s")) != 0 {
		t.Fatal("unauthorised request recorded")
	}
	if a := post(t, s, "bearer "+token, create, in); a.Status != 200 {
		t.Fatalf("lower-case scheme: %s", a.raw)
	}
	if reqs := s.Requests(); len(reqs) != 6 || reqs[1].Authorization != token {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestServer_Validation(t *testing.T) {
	s := newServer(t)
	tests := map[string]string{
		"no session":            `{"content":{"type":"thought","body":"x"}}`,
		"no content":            `{"agentSessionId":"s"}`,
		"prompt":                `{"agentSessionId":"s","content":{"type":"prompt","body":"x"}}`,
		"unknown type":          `{"agentSessionId":"s","content":{"type":"note","body":"x"}}`,
		"empty body":            `{"agentSessionId":"s","content":{"type":"response","body":" "}}`,
		"extra content field":   `{"agentSessionId":"s","content":{"type":"response","body":"x","title":"y"}}`,
		"null parameter":        `{"agentSessionId":"s","content":{"type":"action","action":"a","parameter":null}}`,
		"no parameter":          `{"agentSessionId":"s","content":{"type":"action","action":"a"}}`,
		"no action":             `{"agentSessionId":"s","content":{"type":"action","parameter":""}}`,
		"ephemeral response":    `{"agentSessionId":"s","content":{"type":"response","body":"x"},"ephemeral":true}`,
		"ephemeral not bool":    `{"agentSessionId":"s","content":{"type":"thought","body":"x"},"ephemeral":"yes"}`,
		"stop from agent":       `{"agentSessionId":"s","content":{"type":"response","body":"x"},"signal":"stop"}`,
		"select on response":    `{"agentSessionId":"s","content":{"type":"response","body":"x"},"signal":"select","signalMetadata":{"options":[{"value":"a"}]}}`,
		"select without opts":   `{"agentSessionId":"s","content":{"type":"elicitation","body":"x"},"signal":"select"}`,
		"select empty value":    `{"agentSessionId":"s","content":{"type":"elicitation","body":"x"},"signal":"select","signalMetadata":{"options":[{"label":"A"}]}}`,
		"auth without url":      `{"agentSessionId":"s","content":{"type":"elicitation","body":"x"},"signal":"auth","signalMetadata":{}}`,
		"unknown signal":        `{"agentSessionId":"s","content":{"type":"elicitation","body":"x"},"signal":"halt"}`,
		"metadata no signal":    `{"agentSessionId":"s","content":{"type":"elicitation","body":"x"},"signalMetadata":{"options":[]}}`,
		"v5 id":                 `{"id":"6ba7b810-9dad-51d1-80b4-00c04fd430c8","agentSessionId":"s","content":{"type":"thought","body":"x"}}`,
		"unknown input field":   `{"agentSessionId":"s","content":{"type":"thought","body":"x"},"agentSession":"s"}`,
		"input not an object":   `"x"`,
		"content not an object": `{"agentSessionId":"s","content":"thought"}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			a := post(t, s, "Bearer "+token, create, activityVars(in))
			if a.code() == "" {
				t.Fatalf("accepted: %d %s", a.Status, a.raw)
			}
		})
	}
	if len(s.Activities("s")) != 0 {
		t.Fatalf("recorded %+v", s.Activities("s"))
	}
	ok := map[string]string{
		"action no result": `{"agentSessionId":"s","content":{"type":"action","action":"a","parameter":""}}`,
		"select":           `{"agentSessionId":"s","content":{"type":"elicitation","body":"x"},"signal":"select","signalMetadata":{"options":[{"value":"a","label":"A"},{"value":"b"}]}}`,
		"auth":             `{"agentSessionId":"s","content":{"type":"elicitation","body":"x"},"signal":"auth","signalMetadata":{"url":"https://auth"}}`,
		"continue":         `{"agentSessionId":"s","content":{"type":"response","body":"x"},"signal":"continue"}`,
	}
	for name, in := range ok {
		if a := post(t, s, "Bearer "+token, create, activityVars(in)); a.code() != "" {
			t.Errorf("%s refused: %s", name, a.raw)
		}
	}
}

func TestServer_Faults(t *testing.T) {
	s := newServer(t)
	in := activityVars(`{"id":"` + id2 + `","agentSessionId":"` + session + `","content":{"type":"error","body":"x"}}`)
	s.FailGraphQL(1, "INTERNAL_ERROR", "boom")
	if a := post(t, s, "Bearer "+token, create, in); a.Status != 200 || a.code() != "INTERNAL_ERROR" {
		t.Fatalf("%d %s", a.Status, a.raw)
	}
	s.FailHTTP(1, http.StatusServiceUnavailable)
	if a := post(t, s, "Bearer "+token, create, in); a.Status != 503 || len(a.Errors) != 0 {
		t.Fatalf("%d %s", a.Status, a.raw)
	}
	s.RateLimit(1, 1500*time.Millisecond)
	a := post(t, s, "Bearer "+token, create, in)
	if a.Status != 200 || a.code() != "RATELIMITED" || a.Header.Get("Retry-After") != "2" || a.Header.Get("X-RateLimit-Requests-Reset") == "" {
		t.Fatalf("%d %v %s", a.Status, a.Header, a.raw)
	}
	if len(s.Activities(session)) != 0 {
		t.Fatal("a failed request recorded an activity")
	}
	s.Inject(1, Fault{Status: 502, AfterApply: true})
	if a := post(t, s, "Bearer "+token, create, in); a.Status != 502 {
		t.Fatalf("%d %s", a.Status, a.raw)
	}
	if a := post(t, s, "Bearer "+token, create, in); a.Status != 200 {
		t.Fatalf("%d %s", a.Status, a.raw)
	}
	if n := len(s.Activities(session)); n != 1 {
		t.Fatalf("%d activities", n)
	}
	reqs := s.Requests()
	if len(reqs) != 5 || reqs[0].ErrorCode != "INTERNAL_ERROR" || reqs[1].Status != 503 || reqs[3].Status != 502 || reqs[4].Operation != opActivityCreate {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestServer_SessionUpdate(t *testing.T) {
	s := newServer(t)
	a := post(t, s, "Bearer "+token, update, `{"id":"`+session+`","input":{"addedExternalUrls":[{"label":"L","url":"https://u"}]}}`)
	if a.Status != 200 || !strings.Contains(string(a.Data["agentSessionUpdate"]), `"success":true`) {
		t.Fatalf("%s", a.raw)
	}
	if ups := s.SessionUpdates(session); len(ups) != 1 || string(ups[0].Input) != `{"addedExternalUrls":[{"label":"L","url":"https://u"}]}` {
		t.Fatalf("updates %+v", ups)
	}
	for _, vars := range []string{`{"input":{"plan":{}}}`, `{"id":"x","input":{"status":"complete"}}`} {
		if a := post(t, s, "Bearer "+token, update, vars); a.code() == "" {
			t.Fatalf("%s accepted: %s", vars, a.raw)
		}
	}
}

func TestServer_BadRequests(t *testing.T) {
	s := newServer(t)
	if a := post(t, s, "Bearer "+token, `query { teams { nodes { id } } }`, `{}`); a.code() == "" {
		t.Fatalf("unknown operation: %s", a.raw)
	}
	// FailViewer fails viewer queries only (readiness probes), then they recover.
	s.FailViewer(1, Fault{Status: 401, Code: codeAuth, Message: "revoked"})
	if a := post(t, s, "Bearer "+token, `query Viewer { viewer { id name } organization { id name urlKey } }`, `{}`); a.Status != 401 || a.code() != codeAuth {
		t.Fatalf("failed viewer: %s", a.raw)
	}
	if a := post(t, s, "Bearer "+token, `query Viewer { viewer { id name } organization { id name urlKey } }`, `{}`); a.Status != 200 || !strings.Contains(string(a.Data["viewer"]), `"id"`) {
		t.Fatalf("viewer after the fault: %s", a.raw)
	}
	if a := post(t, s, "Bearer "+token, `mutation { agentActivityCreate(input: {agentSessionId: "s"}) { success } }`, `{}`); a.code() == "" {
		t.Fatalf("inline input: %s", a.raw)
	}
	resp, err := http.Post(s.URL(), "application/json", bytes.NewReader([]byte(`{not json`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp, err = http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET status %d", resp.StatusCode)
	}
}

func TestServer_WaitActivities(t *testing.T) {
	s := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() { // no t in here: a failure shows as a timeout below
		time.Sleep(20 * time.Millisecond)
		for _, in := range []string{`{"type":"thought","body":"a"}`, `{"type":"response","body":"b"}`} {
			body := `{"query":` + quoteJSON(create) + `,"variables":{"input":{"agentSessionId":"` + session + `","content":` + in + `}}}`
			req, _ := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}()
	acts, err := s.WaitActivities(ctx, session, 2)
	if err != nil || len(acts) != 2 || acts[0].Body != "a" || acts[1].Type != "response" {
		t.Fatalf("%+v %v", acts, err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if acts, err := s.WaitActivities(short, session, 3); err == nil || len(acts) != 2 {
		t.Fatalf("%+v %v", acts, err)
	}
}
