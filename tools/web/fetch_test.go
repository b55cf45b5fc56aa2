package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"brain/tools"
	"brain/tools/toolstest"
	"brain/tools/web"
)

type fetched struct {
	URL       string `json:"url"`
	Status    int    `json:"status"`
	Title     string `json:"title"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

// fetch runs web_fetch on rawURL through the engine's contract: the input
// is validated first and the output against the declared schema.
func fetch(t *testing.T, cfg web.FetchConfig, rawURL string) (fetched, error) {
	t.Helper()
	def, err := web.Fetch(cfg)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	tool, err := tools.Compile(def)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	in, _ := json.Marshal(map[string]string{"url": rawURL})
	if err := tool.ValidateInput(in); err != nil {
		t.Fatalf("input %s: %v", in, err)
	}
	out, err := tool.Run(context.Background(), tools.Call{Input: in, SessionID: "s", ToolCallID: "c"})
	if err != nil {
		return fetched{}, err
	}
	if err := tool.ValidateOutput(out); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	var f fetched
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	return f, nil
}

const page = `<!doctype html><html><head><title>Example Domain</title><style>body{}</style>
<script>alert("x")</script></head><body><nav><a href="/">Home</a></nav>
<h1>Example Domain</h1><p>This domain is for use in <a href="https://iana.org">examples</a>.</p></body></html>`

func TestFetch_PublicNameHappyPath(t *testing.T) {
	srv, hits := counted(t, false, serve("text/html; charset=utf-8", page))
	n := newFakeNet()
	n.name("www.example.com", publicIP)
	n.route(publicIP, srv)
	got, err := fetch(t, n.config(web.FetchConfig{}), "http://www.example.com/index.html#top")
	if err != nil {
		t.Fatal(err)
	}
	want := fetched{URL: "http://www.example.com/index.html", Status: 200, Title: "Example Domain",
		Content: "# Example Domain\n\nThis domain is for use in examples."}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if hits.Load() != 1 || fmt.Sprint(n.dials()) != "["+publicIP+":80]" {
		t.Errorf("hits %d, dialled %v", hits.Load(), n.dials())
	}
}

func TestFetch_ContentTypes(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	for _, tc := range []struct {
		name, ct, body string
		title, content string
		err            string
	}{
		{"html", "text/html; charset=utf-8", page, "Example Domain", "# Example Domain\n\nThis domain is for use in examples.", ""},
		{"text passes through", "text/plain; charset=utf-8", "  line 1\r\n\r\n  line 2  \n", "", "line 1\n\n  line 2", ""},
		{"json passes through", "application/json", `{"a": [1, 2], "b": "<x>"}`, "", `{"a": [1, 2], "b": "<x>"}`, ""},
		{"latin-1 text", "text/plain; charset=iso-8859-1", "caf\xe9", "", "café", ""},
		{"no type, html sniffed", "", "<!DOCTYPE html><title>T</title><p>x</p>", "T", "x", ""},
		{"octet-stream text sniffed", "application/octet-stream", "just text", "", "just text", ""},
		{"png refused", "image/png", png, "", "", "the response is image/png, a binary type"},
		{"pdf refused", "application/pdf", "%PDF-1.7", "", "", "application/pdf"},
		{"binary bytes behind a text type", "text/plain", png, "", "", "image/png"},
		{"binary without a type", "", "\x00\x01\x02\x03", "", "", "application/octet-stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := counted(t, false, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil // no sniffing by the server
				if tc.ct != "" {
					w.Header().Set("Content-Type", tc.ct)
				}
				io.WriteString(w, tc.body)
			})
			got, err := fetch(t, web.FetchConfig{AllowPrivate: true}, srv.URL)
			if tc.err != "" {
				toolstest.ToolError(t, err, false, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != tc.title || got.Content != tc.content || got.Truncated {
				t.Errorf("got %+v, want title %q content %q", got, tc.title, tc.content)
			}
		})
	}
}

func TestFetch_Truncation(t *testing.T) {
	long := strings.Repeat("é", 30) + " " + strings.Repeat("x", 30)
	srv, _ := counted(t, false, serve("text/plain; charset=utf-8", long))
	got, err := fetch(t, web.FetchConfig{AllowPrivate: true, MaxChars: 30}, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("é", 30) + "\n\n[truncated: showing the first 30 of 61 characters]"
	if !got.Truncated || got.Content != want {
		t.Errorf("got %+v\nwant content %q", got, want)
	}

	// Over MaxBody: the page is cut and the result says so; not an error.
	big := "<title>Big</title><p>" + strings.Repeat("word ", 1000) + "</p><p>tail</p>"
	srv2, _ := counted(t, false, serve("text/html", big))
	got, err = fetch(t, web.FetchConfig{AllowPrivate: true, MaxBody: 200, MaxChars: 10000}, srv2.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated || got.Title != "Big" || strings.Contains(got.Content, "tail") ||
		!strings.HasSuffix(got.Content, "[truncated: the page is larger than 200 bytes; only the first 200 bytes were read]") {
		t.Errorf("got %+v", got)
	}
	if words := strings.Count(got.Content, "word"); words < 30 || words > 40 {
		t.Errorf("%d words kept from 200 bytes", words)
	}
}

func TestFetch_Failures(t *testing.T) {
	srv, _ := counted(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "<title>x</title><h1>Page not found</h1><script>x()</script>")
		case "/500":
			http.Error(w, "database down", http.StatusInternalServerError)
		case "/429":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/drop":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	})
	cfg := web.FetchConfig{AllowPrivate: true, Timeout: 300 * time.Millisecond}
	for path, want := range map[string]struct {
		unknown bool
		msg     string
	}{
		"/404":  {false, "HTTP 404 Not Found: # Page not found"},
		"/500":  {true, "HTTP 500 Internal Server Error: database down"},
		"/429":  {true, "HTTP 429"},
		"/drop": {true, "EOF"},
		"/slow": {true, "timed out after 300ms"},
	} {
		_, err := fetch(t, cfg, srv.URL+path)
		toolstest.ToolError(t, err, want.unknown, want.msg)
	}

	// Refusals before dispatch.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for rawURL, want := range map[string]string{
		"ftp://example.com/file":   `unsupported scheme "ftp"`,
		"file:///etc/passwd":       `unsupported scheme "file"`,
		"example.com/no-scheme":    "no scheme",
		"http://user:pw@host/":     "credentials",
		"http://bad host/":         "not a valid URL",
		closed.URL + "/":           "nothing was sent",
		"http://nxdomain.invalid/": "nothing was sent",
	} {
		n := newFakeNet()
		c := n.config(web.FetchConfig{AllowPrivate: true})
		if rawURL == closed.URL+"/" {
			c = web.FetchConfig{AllowPrivate: true}
		}
		_, err := fetch(t, c, rawURL)
		toolstest.ToolError(t, err, false, want)
	}
}

func TestFetch_Config(t *testing.T) {
	if _, err := web.Fetch(web.FetchConfig{MaxChars: -1}); err == nil {
		t.Error("negative max_chars accepted")
	}
	def, err := web.Fetch(web.FetchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if def.Name != "web_fetch" || def.Timeout != web.DefaultTimeout+time.Second || !strings.Contains(def.Description, "4000") {
		t.Errorf("definition %+v", def)
	}
	out, err := def.Run(context.Background(), tools.Call{Input: json.RawMessage(`{"url": 3}`)})
	if out != nil {
		t.Errorf("out = %s", out)
	}
	toolstest.ToolError(t, err, false, "url string")
}
