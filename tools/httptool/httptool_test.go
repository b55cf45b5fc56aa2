package httptool_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"brain/tools"
	"brain/tools/httptool"
	"brain/tools/toolstest"
)

const secret = "s3cr3t-token-0123456789"

func reply(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func ticketSpec(url string) httptool.Spec {
	return httptool.Spec{
		Name:        "create_ticket",
		Description: "Create a ticket in the tracker",
		Input:       json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`),
		URL:         url,
		Headers:     map[string]string{"Authorization": "Bearer " + secret, "X-Team": "support"},
	}
}

// compile builds the tool and checks the engine's contract accepts it.
func compile(t *testing.T, spec httptool.Spec, client *http.Client) *tools.Tool {
	t.Helper()
	def, err := httptool.New(spec, client)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tool, err := tools.Compile(def)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return tool
}

func call(input string) tools.Call {
	return tools.Call{Input: json.RawMessage(input), SessionID: "sess-1", ToolCallID: "call-7"}
}

// toolError asserts err is a *tools.Error with the given outcome whose
// message does not leak the secret, and returns it.
func toolError(t *testing.T, err error, unknown bool) *tools.Error {
	t.Helper()
	te := toolstest.ToolError(t, err, unknown)
	if strings.Contains(te.Message, secret) {
		t.Fatalf("message leaks the secret: %q", te.Message)
	}
	return te
}

func TestRun_SendsArgumentsKeyAndHeaders(t *testing.T) {
	tg := toolstest.NewRecorder(t, reply(201, `{"id":"T-1"}`))
	for _, tc := range []struct {
		name   string
		client *http.Client
	}{{"own client", nil}, {"given client", tg.Client()}} {
		t.Run(tc.name, func(t *testing.T) {
			tool := compile(t, ticketSpec(tg.URL+"/api/tickets"), tc.client)
			if tool.NeedsApproval() || tool.Run == nil {
				t.Fatal("a tool without approval must use run")
			}
			out, err := tool.Run(context.Background(), call(`{"title":"Printer on fire"}`))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if string(out) != `{"id":"T-1"}` {
				t.Errorf("output = %s", out)
			}
			reqs := tg.Requests()
			r := reqs[len(reqs)-1]
			checks := map[string][2]string{
				"method":          {r.Method, "POST"},
				"path":            {r.Path, "/api/tickets"},
				"body":            {r.Body, `{"title":"Printer on fire"}`},
				"Idempotency-Key": {r.Header.Get("Idempotency-Key"), "sess-1:call-7"},
				"Content-Type":    {r.Header.Get("Content-Type"), "application/json"},
				"Authorization":   {r.Header.Get("Authorization"), "Bearer " + secret},
				"X-Team":          {r.Header.Get("X-Team"), "support"},
			}
			for what, c := range checks {
				if c[0] != c[1] {
					t.Errorf("%s = %q, want %q", what, c[0], c[1])
				}
			}
		})
	}
}

func TestRun_GetSendsQueryParameters(t *testing.T) {
	tg := toolstest.NewRecorder(t, reply(200, `{"hits":[]}`))
	spec := ticketSpec(tg.URL + "/search?v=1")
	spec.Method = "get"
	tool := compile(t, spec, nil)
	if _, err := tool.Run(context.Background(), call(`{"q":"a b&c","n":1000,"ok":true,"tags":["x","y"],"none":null}`)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := tg.Requests()[0]
	if r.Method != "GET" || r.Body != "" || r.Header.Get("Content-Type") != "" {
		t.Errorf("method %s, body %q, content type %q; want GET with no body", r.Method, r.Body, r.Header.Get("Content-Type"))
	}
	want := map[string]string{"v": "1", "q": "a b&c", "n": "1000", "ok": "true", "tags": "x,y"}
	for k, v := range want {
		if got := strings.Join(r.Query[k], ","); got != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
	if _, ok := r.Query["none"]; ok {
		t.Error("a null argument was sent")
	}
	if r.Header.Get("Idempotency-Key") != "sess-1:call-7" {
		t.Errorf("Idempotency-Key = %q", r.Header.Get("Idempotency-Key"))
	}

	_, err := tool.Run(context.Background(), call(`{"filter":{"a":1}}`))
	te := toolError(t, err, false)
	if !strings.Contains(te.Message, `"filter"`) {
		t.Errorf("message %q does not name the argument", te.Message)
	}
	if n := len(tg.Requests()); n != 1 {
		t.Errorf("target got %d requests, want 1: an unencodable call must not be sent", n)
	}
}

func TestApply_SendsDecisionIDAsKey(t *testing.T) {
	tg := toolstest.NewRecorder(t, reply(200, `{"ok":true}`))
	spec := ticketSpec(tg.URL + "/api/tickets")
	spec.Approval = &httptool.Approval{Title: "Create ticket {{.title}}"}
	tool := compile(t, spec, nil)
	if !tool.NeedsApproval() || tool.Run != nil || tool.Preview == nil || tool.Apply == nil {
		t.Fatal("an approval tool must have preview and apply and no run")
	}
	out, err := tool.Apply(context.Background(), call(`{"title":"Disk full"}`), tools.Decision{ID: "apr-42", By: "ann"})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if string(out) != `{"ok":true}` {
		t.Errorf("output = %s", out)
	}
	r := tg.Requests()[0]
	if r.Header.Get("Idempotency-Key") != "apr-42" || r.Body != `{"title":"Disk full"}` || r.Header.Get("Authorization") != "Bearer "+secret {
		t.Errorf("got key %q body %q auth %q", r.Header.Get("Idempotency-Key"), r.Body, r.Header.Get("Authorization"))
	}

	_, err = tool.Apply(context.Background(), call(`{}`), tools.Decision{})
	toolError(t, err, false)
	if n := len(tg.Requests()); n != 1 {
		t.Errorf("apply without a decision id sent a request (%d in all)", n)
	}
}

func TestRun_Statuses(t *testing.T) {
	long := strings.Repeat("é", 2000)
	for _, tc := range []struct {
		code    int
		body    string
		unknown bool
		want    []string
	}{
		{500, `{"error":"database exploded"}`, true, []string{"HTTP 500", "database exploded"}},
		{503, "try later", true, []string{"HTTP 503 Service Unavailable", "try later"}},
		{502, long, true, []string{"HTTP 502", "…"}},
		{404, `{"error":"no such project"}`, false, []string{"HTTP 404 Not Found", "no such project"}},
		{400, "title is required", false, []string{"HTTP 400", "title is required"}},
		{408, "", true, []string{"HTTP 408"}},
		{429, "slow down", true, []string{"HTTP 429", "slow down"}},
		{303, "", true, []string{"HTTP 303"}},
	} {
		t.Run(http.StatusText(tc.code), func(t *testing.T) {
			tg := toolstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.code/100 == 3 {
					w.Header().Set("Location", "/elsewhere")
				}
				reply(tc.code, tc.body)(w, r)
			})
			tool := compile(t, ticketSpec(tg.URL+"/api/tickets"), nil)
			_, err := tool.Run(context.Background(), call(`{"title":"x"}`))
			te := toolError(t, err, tc.unknown)
			for _, w := range tc.want {
				if !strings.Contains(te.Message, w) {
					t.Errorf("message %q lacks %q", te.Message, w)
				}
			}
			if n := strings.Count(te.Message, "é"); n > 500 {
				t.Errorf("excerpt has %d body characters, want at most 500", n)
			}
			if n := len(tg.Requests()); n != 1 {
				t.Errorf("target got %d requests, want exactly 1 (no retries, no redirects)", n)
			}
		})
	}
}

func TestRun_Bodies(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       int
		max        int64
		out        string // success output; empty = expect an unknown outcome
		want       string
	}{
		{name: "empty 2xx", code: 204, out: `{"status":204}`},
		{name: "blank 200", code: 200, body: " \n", out: `{"status":200}`},
		{name: "non-JSON 200", code: 200, body: "<html>ok</html>", want: "returned invalid JSON"},
		{name: "oversized", code: 200, max: 100, body: `{"data":"` + strings.Repeat("x", 1000) + `"}`, want: "response over 100 bytes"},
		{name: "at the cap", code: 200, max: 12, body: `{"data":"x"}`, out: `{"data":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := toolstest.NewRecorder(t, reply(tc.code, tc.body))
			spec := ticketSpec(tg.URL)
			spec.MaxResponseBytes = tc.max
			tool := compile(t, spec, nil)
			out, err := tool.Run(context.Background(), call(`{}`))
			if tc.out != "" {
				if err != nil || string(out) != tc.out {
					t.Fatalf("got %s, %v; want %s", out, err, tc.out)
				}
				return
			}
			te := toolError(t, err, true)
			if !strings.Contains(te.Message, tc.want) {
				t.Errorf("message %q lacks %q", te.Message, tc.want)
			}
		})
	}
}

func TestRun_TimeoutIsUnknown(t *testing.T) {
	tg := toolstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	spec := ticketSpec(tg.URL)
	spec.Timeout = 50 * time.Millisecond
	tool := compile(t, spec, nil)
	if tool.Timeout <= spec.Timeout {
		t.Errorf("definition timeout %s leaves the request's own %s no room", tool.Timeout, spec.Timeout)
	}
	start := time.Now()
	_, err := tool.Run(context.Background(), call(`{}`))
	te := toolError(t, err, true)
	if !strings.Contains(te.Message, "timed out after 50ms") {
		t.Errorf("message %q does not say it timed out after 50ms", te.Message)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestRun_Cancellation(t *testing.T) {
	started := make(chan struct{}, 1)
	tg := toolstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	})
	tool := compile(t, ticketSpec(tg.URL), nil)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool.Run(ctx, call(`{}`))
	toolError(t, err, false) // cancelled before a connection: nothing sent
	if n := len(tg.Requests()); n != 0 {
		t.Fatalf("a cancelled call reached the target (%d requests)", n)
	}

	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err = tool.Run(ctx, call(`{}`))
	te := toolError(t, err, true)
	if !strings.Contains(te.Message, "cancelled") {
		t.Errorf("message %q does not say cancelled", te.Message)
	}
}

func TestRun_DroppedConnectionIsUnknown(t *testing.T) {
	tg := toolstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	tool := compile(t, ticketSpec(tg.URL), nil)
	_, err := tool.Run(context.Background(), call(`{}`))
	toolError(t, err, true)
	if n := len(tg.Requests()); n != 1 {
		t.Errorf("target got %d requests, want 1: no automatic retries", n)
	}
}

// roundTripper is a transport that does not report connections through
// httptrace, so only a dial error proves nothing was sent.
type roundTripper struct{ http.RoundTripper }

func TestRun_ConnectionRefusedIsNotUnknown(t *testing.T) {
	tg := toolstest.NewRecorder(t, reply(200, `{}`))
	url := tg.URL
	tg.Close()
	for _, tc := range []struct {
		name   string
		client *http.Client
	}{
		{"own client", nil},
		{"opaque transport", &http.Client{Transport: roundTripper{&http.Transport{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := compile(t, ticketSpec(url+"/api"), tc.client)
			_, err := tool.Run(context.Background(), call(`{}`))
			te := toolError(t, err, false)
			if !strings.Contains(te.Message, "nothing was sent") {
				t.Errorf("message %q", te.Message)
			}
		})
	}
}

func TestRun_SecretsNeverLeak(t *testing.T) {
	echo := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(map[string]string{
				"error": "bad credentials: " + auth,
				"token": strings.TrimPrefix(auth, "Bearer "),
				"url":   r.URL.String(),
			})
		}
	}
	t.Run("error excerpt", func(t *testing.T) {
		tg := toolstest.NewRecorder(t, echo(400))
		tool := compile(t, ticketSpec(tg.URL+"/api/tickets?api_key=qs-9876543210"), nil)
		_, err := tool.Run(context.Background(), call(`{}`))
		te := toolError(t, err, false)
		if !strings.Contains(te.Message, "[REDACTED]") {
			t.Errorf("message %q does not show the redaction", te.Message)
		}
		if strings.Contains(te.Message, "qs-9876543210") {
			t.Errorf("message %q leaks the query key", te.Message)
		}
		if !strings.Contains(te.Message, "POST "+tg.URL+"/api/tickets: HTTP 400") {
			t.Errorf("message %q does not show scheme://host/path", te.Message)
		}
	})
	t.Run("2xx output", func(t *testing.T) {
		tg := toolstest.NewRecorder(t, echo(200))
		tool := compile(t, ticketSpec(tg.URL), nil)
		out, err := tool.Run(context.Background(), call(`{}`))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if strings.Contains(string(out), secret) || !strings.Contains(string(out), "[REDACTED]") || !json.Valid(out) {
			t.Errorf("output %s is not valid, redacted JSON", out)
		}
	})
}

func TestNew_Errors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*httptool.Spec)
		want   string
	}{
		{"bad title template", func(s *httptool.Spec) { s.Approval = &httptool.Approval{Title: "Create {{.title"} }, "title template"},
		{"bad fact template", func(s *httptool.Spec) {
			s.Approval = &httptool.Approval{Title: "ok", Facts: []httptool.Fact{{Label: "T", Value: "{{if}}"}}}
		}, "fact 1 value template"},
		{"empty title", func(s *httptool.Spec) { s.Approval = &httptool.Approval{} }, "title is empty"},
		{"ftp URL", func(s *httptool.Spec) { s.URL = "ftp://files.example/x" }, "http or https"},
		{"relative URL", func(s *httptool.Spec) { s.URL = "/api/tickets" }, "http or https"},
		{"no host", func(s *httptool.Spec) { s.URL = "http:///api" }, "no host"},
		{"unparsable URL", func(s *httptool.Spec) { s.URL = "http://exa mple.com/%zz?key=" + secret }, "not a valid URL"},
		{"bad method", func(s *httptool.Spec) { s.Method = "PO ST" }, "method"},
		{"idempotency key header", func(s *httptool.Spec) { s.Headers = map[string]string{"idempotency-key": "x"} }, "Idempotency-Key"},
		{"header value with newline", func(s *httptool.Spec) { s.Headers = map[string]string{"Authorization": secret + "\r\nX: y"} }, "Authorization"},
		{"bad tool name", func(s *httptool.Spec) { s.Name = "create ticket" }, "name must match"},
		{"bad input schema", func(s *httptool.Spec) { s.Input = json.RawMessage(`{"type":12}`) }, "input schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := ticketSpec("https://tickets.example/api")
			tc.mutate(&spec)
			_, err := httptool.New(spec, nil)
			if err == nil {
				t.Fatal("New accepted the spec")
			}
			msg := err.Error()
			if !strings.Contains(msg, `"`+spec.Name+`"`) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not name the tool and say %q", msg, tc.want)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error %q leaks a header value", msg)
			}
		})
	}
}
