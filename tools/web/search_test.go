package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"brain/tools"
	"brain/tools/toolstest"
	"brain/tools/web"
)

const key = "sk-live/secret+key-0123456789"

func reply(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

type hit struct{ Title, URL, Snippet string }

type searched struct {
	Query   string
	Results []hit
}

// search runs web_search through the engine's contract and checks no
// secret leaks into the result or the error.
func search(t *testing.T, cfg web.SearchConfig, input string) (searched, error) {
	t.Helper()
	def, err := web.Search(cfg)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	tool, err := tools.Compile(def)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
		t.Fatalf("input %s: %v", input, err)
	}
	out, err := tool.Run(context.Background(), tools.Call{Input: json.RawMessage(input), SessionID: "s", ToolCallID: "c"})
	for _, leak := range []string{key, url.QueryEscape(key), url.PathEscape(key)} {
		if strings.Contains(string(out), leak) || (err != nil && strings.Contains(err.Error(), leak)) {
			t.Fatalf("the key leaked: out %s, err %v", out, err)
		}
	}
	if err != nil {
		return searched{}, err
	}
	if err := tool.ValidateOutput(out); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	var s searched
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	if s.Results == nil {
		t.Fatalf("results is null in %s", out)
	}
	return s, nil
}

func TestSearch_Providers(t *testing.T) {
	three := []hit{
		{"Go 1", "https://go.dev/1", "first"},
		{"Go 2", "https://go.dev/2", `Go is "fast"`},
		{"Go 3", "https://go.dev/3", "third"},
	}
	for _, tc := range []struct {
		provider string
		endpoint string // path appended to the server's URL
		apiKey   string
		input    string
		answer   string
		want     toolstest.Recorded // Header holds only the headers checked
		results  []hit
	}{
		{
			provider: "tavily", apiKey: key, input: `{"query":"golang generics","max_results":3}`,
			answer: `{"query":"golang generics","answer":null,"results":[
				{"title":"Go 1","url":"https://go.dev/1","content":"first","score":0.9,"raw_content":null},
				{"title":"Go 2","url":"https://go.dev/2","content":"Go is \"fast\""},
				{"title":"Go 3","url":"https://go.dev/3","content":"third"},
				{"title":"Go 4","url":"https://go.dev/4","content":"cut by max_results"}],"response_time":"1.2"}`,
			want: toolstest.Recorded{Method: "POST", Path: "/search", Query: url.Values{},
				Header: http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}},
				Body:   `{"max_results":3,"query":"golang generics"}`},
			results: three,
		},
		{
			provider: "brave", apiKey: key, input: `{"query":"golang generics","max_results":3}`,
			answer: `{"type":"search","web":{"type":"search","results":[
				{"title":"Go 1","url":"https://go.dev/1","description":"first"},
				{"title":"Go 2","url":"https://go.dev/2","description":"<strong>Go</strong> is &quot;fast&quot;"},
				{"title":"Go 3","url":"https://go.dev/3","description":"third"}]}}`,
			want: toolstest.Recorded{Method: "GET", Path: "/res/v1/web/search",
				Query:  url.Values{"q": {"golang generics"}, "count": {"3"}},
				Header: http.Header{"X-Subscription-Token": {key}, "Accept": {"application/json"}}},
			results: three,
		},
		{
			provider: "searxng", endpoint: "/searx/", input: `{"query":"golang generics","max_results":3}`,
			answer: `{"query":"golang generics","number_of_results":0,"results":[
				{"title":"Go 1","url":"https://go.dev/1","content":"first","engine":"ddg"},
				{"title":"Go 2","url":"https://go.dev/2","content":"Go is \"fast\""},
				{"title":"Go 3","url":"https://go.dev/3","content":"third"},
				{"title":"","url":"","content":"no url: skipped"},
				{"title":"Go 5","url":"https://go.dev/5","content":"cut"}],"infoboxes":[]}`,
			want: toolstest.Recorded{Method: "GET", Path: "/searx/search",
				Query: url.Values{"q": {"golang generics"}, "format": {"json"}}, Header: http.Header{}},
			results: three,
		},
		{
			provider: "ollama", apiKey: key, input: `{"query":"golang generics","max_results":15}`,
			answer: `{"results":[{"title":"Go 1","url":"https://go.dev/1","content":"first"},
				{"title":"Go 2","url":"https://go.dev/2","content":"Go is \"fast\""},
				{"title":"Go 3","url":"https://go.dev/3","content":"third"}]}`,
			want: toolstest.Recorded{Method: "POST", Path: "/api/web_search", Query: url.Values{},
				Header: http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}},
				Body:   `{"max_results":10,"query":"golang generics"}`}, // Ollama returns at most 10
			results: three,
		},
		{
			provider: "mojeek", apiKey: key, input: `{"query":"golang generics"}`,
			answer: `{"response":{"status":"OK","head":{"query":"golang generics","return":3},"results":[
				{"url":"https://go.dev/1","title":"Go 1","desc":"first","size":1},
				{"url":"https://go.dev/2","title":"Go 2","desc":"Go is &quot;fast&quot;"},
				{"url":"https://go.dev/3","title":"Go 3","desc":"third"}]}}`,
			want: toolstest.Recorded{Method: "GET", Path: "/search",
				Query:  url.Values{"q": {"golang generics"}, "api_key": {key}, "fmt": {"json"}, "t": {"5"}},
				Header: http.Header{"Accept": {"application/json"}}},
			results: three,
		},
		{
			provider: "marginalia", input: `{"query":"linear b/c","max_results":3}`,
			answer: `{"query":"linear b/c","license":"CC-BY-NC-SA 4.0","results":[
				{"url":"https://go.dev/1","title":"Go 1","description":"first","quality":1.5},
				{"url":"https://go.dev/2","title":"Go 2","description":"Go is \"fast\""},
				{"url":"https://go.dev/3","title":"Go 3","description":"third"}]}`,
			want: toolstest.Recorded{Method: "GET", Path: "/public/search/linear b/c", RawPath: "/public/search/linear%20b%2Fc",
				Query: url.Values{"count": {"3"}}, Header: http.Header{}},
			results: three,
		},
		{
			provider: "marginalia", apiKey: key, input: `{"query":"q","max_results":1}`,
			answer: `{"results":[{"url":"https://go.dev/1","title":"Go 1","description":"first"}]}`,
			want: toolstest.Recorded{Method: "GET", Path: "/" + key + "/search/q", RawPath: "/" + url.PathEscape(key) + "/search/q",
				Query: url.Values{"count": {"1"}}, Header: http.Header{}},
			results: three[:1],
		},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			p := toolstest.NewRecorder(t, reply(200, tc.answer))
			got, err := search(t, web.SearchConfig{Provider: tc.provider, APIKey: tc.apiKey, Endpoint: p.URL + tc.endpoint}, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			req := p.Only(t)
			if req.Method != tc.want.Method || req.Path != tc.want.Path || req.RawPath != tc.want.RawPath ||
				!reflect.DeepEqual(req.Query, tc.want.Query) || req.Body != tc.want.Body {
				t.Errorf("request %s %s (raw %q) %v %q\nwant    %s %s (raw %q) %v %q",
					req.Method, req.Path, req.RawPath, req.Query, req.Body,
					tc.want.Method, tc.want.Path, tc.want.RawPath, tc.want.Query, tc.want.Body)
			}
			for h, vs := range tc.want.Header {
				if !reflect.DeepEqual(req.Header.Values(h), vs) {
					t.Errorf("header %s = %q, want %q", h, req.Header.Values(h), vs)
				}
			}
			for _, h := range []string{"Authorization", "X-Subscription-Token"} {
				if _, want := tc.want.Header[h]; !want && req.Header.Get(h) != "" {
					t.Errorf("unexpected header %s", h)
				}
			}
			if !reflect.DeepEqual(got.Results, tc.results) {
				t.Errorf("results %+v\nwant    %+v", got.Results, tc.results)
			}
			if got.Query != strings.TrimSpace(gjsonQuery(tc.input)) {
				t.Errorf("query %q", got.Query)
			}
		})
	}
}

func gjsonQuery(input string) string {
	var in struct{ Query string }
	json.Unmarshal([]byte(input), &in)
	return in.Query
}

func TestSearch_EndpointAlreadyHasThePath(t *testing.T) {
	p := toolstest.NewRecorder(t, reply(200, `{"results":[]}`))
	got, err := search(t, web.SearchConfig{Provider: "searxng", Endpoint: p.URL + "/search"}, `{"query":"x"}`)
	if err != nil || len(got.Results) != 0 {
		t.Fatalf("%+v %v", got, err)
	}
	if req := p.Only(t); req.Path != "/search" {
		t.Errorf("path %q", req.Path)
	}
}

func TestSearch_Construction(t *testing.T) {
	for _, cfg := range []web.SearchConfig{
		{Provider: "google"},
		{Provider: ""},
		{Provider: "searxng"},
		{Provider: "searxng", Endpoint: "  "},
	} {
		if _, err := web.Search(cfg); err == nil {
			t.Errorf("Search(%+v) succeeded", cfg)
		}
	}
	// Everything else constructs; problems surface as tool errors.
	for _, cfg := range []web.SearchConfig{
		{Provider: "Tavily"},
		{Provider: " brave ", Endpoint: "::not a url"},
		{Provider: "mojeek", MaxResults: 99, Timeout: -1},
		{Provider: "marginalia"},
		{Provider: "ollama", APIKey: key},
	} {
		def, err := web.Search(cfg)
		if err != nil {
			t.Errorf("Search(%+v): %v", cfg, err)
			continue
		}
		if def.Name != "web_search" || def.Run == nil {
			t.Errorf("definition %+v", def)
		}
	}
}

func TestSearch_Misconfigured(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name    string
		cfg     web.SearchConfig
		handler http.HandlerFunc
		unknown bool
		want    []string
	}{
		{"missing key", web.SearchConfig{Provider: "tavily"}, nil, false,
			[]string{"web_search (tavily) is misconfigured: no api_key is set", "nothing was sent"}},
		{"missing key brave", web.SearchConfig{Provider: "brave"}, nil, false, []string{"no api_key"}},
		{"missing key ollama", web.SearchConfig{Provider: "ollama"}, nil, false, []string{"no api_key"}},
		{"missing key mojeek", web.SearchConfig{Provider: "mojeek"}, nil, false, []string{"no api_key"}},
		{"bad endpoint", web.SearchConfig{Provider: "brave", APIKey: key, Endpoint: "ftp://" + key + "@x"}, nil, false,
			[]string{"the endpoint is not an absolute http or https URL"}},
		{"unreachable", web.SearchConfig{Provider: "searxng", Endpoint: closed.URL}, nil, false,
			[]string{"GET " + closed.URL + "/search", "connection refused", "nothing was sent"}},
		{"unauthorized echoes the key", web.SearchConfig{Provider: "brave", APIKey: key},
			reply(401, `{"error":{"detail":"invalid token `+key+`"}}`), false,
			[]string{"HTTP 401 Unauthorized", "invalid token [REDACTED]", "check the api_key configured for brave"}},
		{"searxng json disabled", web.SearchConfig{Provider: "searxng"}, reply(403, "Forbidden"), false,
			[]string{"HTTP 403", "search.formats"}},
		{"marginalia public key rate limited", web.SearchConfig{Provider: "marginalia"}, reply(503, ""), true,
			[]string{"HTTP 503", `the shared "public" key is rate limited`}},
		{"marginalia key in path", web.SearchConfig{Provider: "marginalia", APIKey: key}, reply(500, "oops "+url.PathEscape(key)), true,
			[]string{"GET http://", "/[REDACTED]/search/q", "oops [REDACTED]"}},
		{"server error", web.SearchConfig{Provider: "ollama", APIKey: key}, reply(502, "bad gateway"), true,
			[]string{"HTTP 502 Bad Gateway: bad gateway"}},
		{"bad json", web.SearchConfig{Provider: "tavily", APIKey: key}, reply(200, "<html>not json "+key+"</html>"), true,
			[]string{"not valid JSON", "<html>not json [REDACTED]</html>"}},
		{"wrong shape", web.SearchConfig{Provider: "tavily", APIKey: key}, reply(200, `{"results":"none"}`), true,
			[]string{"does not have the expected shape"}},
		{"mojeek error status", web.SearchConfig{Provider: "mojeek", APIKey: key},
			reply(200, `{"response":{"status":"ERROR: Invalid API key `+key+`"}}`), true,
			[]string{`status "ERROR: Invalid API key [REDACTED]"`, "GET http://", "/search"}},
		{"redirect not followed", web.SearchConfig{Provider: "brave", APIKey: key},
			func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
			}, true,
			[]string{"HTTP 302"}},
		{"timeout", web.SearchConfig{Provider: "tavily", APIKey: key, Timeout: 200 * time.Millisecond},
			func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, true,
			[]string{"timed out after 200ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.handler != nil {
				p := toolstest.NewRecorder(t, tc.handler)
				if tc.cfg.Endpoint == "" {
					tc.cfg.Endpoint = p.URL
				}
			}
			if tc.cfg.Endpoint == "" && tc.cfg.Provider == "searxng" {
				t.Fatal("test needs an endpoint")
			}
			_, err := search(t, tc.cfg, `{"query":"q"}`)
			toolstest.ToolError(t, err, tc.unknown, tc.want...)
		})
	}
}

// Failures of the setup carry a cause, the same for every call and
// without the key, so the engine logs them once; others carry none.
func TestSearch_MisconfiguredHasACause(t *testing.T) {
	refused := toolstest.NewRecorder(t, reply(401, `{"error":"invalid token `+key+`"}`))
	broken := toolstest.NewRecorder(t, reply(502, "bad gateway"))
	for _, tc := range []struct {
		name string
		cfg  web.SearchConfig
		want string
	}{
		{"missing key", web.SearchConfig{Provider: "tavily"}, "web_search (tavily) is misconfigured: no api_key is set for the tavily provider"},
		{"refused key", web.SearchConfig{Provider: "brave", APIKey: key, Endpoint: refused.URL}, "web_search (brave): brave answered HTTP 401 (check the api_key configured for brave)"},
		{"server error", web.SearchConfig{Provider: "brave", APIKey: key, Endpoint: broken.URL}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := search(t, tc.cfg, `{"query":"q"}`)
			var te *tools.Error
			if !errors.As(err, &te) || te.Cause != tc.want {
				t.Fatalf("error %v: cause %q, want %q", err, te.Cause, tc.want)
			}
		})
	}
}

func TestSearch_ResultsScrubbedAndClipped(t *testing.T) {
	long := strings.Repeat("word ", 400)
	p := toolstest.NewRecorder(t, reply(200, `{"results":[{"title":"<b>T</b> `+key+`","url":"https://x.example/?k=`+url.QueryEscape(key)+`","content":"`+long+`"}]}`))
	got, err := search(t, web.SearchConfig{Provider: "tavily", APIKey: key, Endpoint: p.URL}, `{"query":"q"}`)
	if err != nil {
		t.Fatal(err)
	}
	r := got.Results[0]
	if r.Title != "T [REDACTED]" || r.URL != "https://x.example/?k=[REDACTED]" || len([]rune(r.Snippet)) != 1000 || !strings.HasSuffix(r.Snippet, "…") {
		t.Errorf("result %+v", r)
	}
}

func TestSearch_BadInput(t *testing.T) {
	def, err := web.Search(web.SearchConfig{Provider: "marginalia"})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := tools.Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{}`, `{"query":""}`, `{"query":"` + strings.Repeat("é", 401) + `"}`, `{"query":"q","max_results":0}`, `{"query":"q","max_results":21}`} {
		if err := tool.ValidateInput(json.RawMessage(in)); err == nil {
			t.Errorf("schema accepted %s", in)
		}
		// Run re-checks, in case it is called without validation; nothing is sent.
		_, err := def.Run(context.Background(), tools.Call{Input: json.RawMessage(in)})
		toolstest.ToolError(t, err, false, "web_search (marginalia)")
	}
	if err := tool.ValidateInput(json.RawMessage(`{"query":"` + strings.Repeat("é", 400) + `","max_results":20}`)); err != nil {
		t.Errorf("schema refused a valid input: %v", err)
	}
}
