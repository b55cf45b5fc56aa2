package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"brain/tools"
	"brain/tools/toolstest"
	"brain/tools/web"
)

// answer is a reply both web_fetch and a search provider read.
func answer(*http.Request, []byte) (toolstest.Response, bool) {
	return toolstest.JSON(`{"results":[{"title":"Result","url":"https://example.org/","content":"text"}]}`), true
}

// TestDispatch_AtMostOnce calls each web tool twice against a target that
// drops the second request of a connection: the target sees each call
// exactly once and both succeed. A call whose connection is dropped after
// the write reaches the target once and has an unknown outcome.
func TestDispatch_AtMostOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		tool  func(url string) (tools.Definition, error)
	}{
		{"web_fetch", `{"url":"URL/page"}`, func(url string) (tools.Definition, error) {
			return web.Fetch(web.FetchConfig{AllowPrivate: true})
		}},
		{"web_search GET (searxng)", `{"query":"go"}`, func(url string) (tools.Definition, error) {
			return web.Search(web.SearchConfig{Provider: "searxng", Endpoint: url})
		}},
		{"web_search POST (tavily)", `{"query":"go"}`, func(url string) (tools.Definition, error) {
			return web.Search(web.SearchConfig{Provider: "tavily", APIKey: key, Endpoint: url})
		}},
		{"web_search, given client", `{"query":"go"}`, func(url string) (tools.Definition, error) {
			return web.Search(web.SearchConfig{Provider: "searxng", Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}})
		}},
	} {
		// One tool, so its client (and any connection it keeps) serves
		// every call.
		compile := func(t *testing.T, d *toolstest.DropTarget) (*tools.Tool, tools.Call) {
			t.Helper()
			def, err := tc.tool(d.URL())
			if err != nil {
				t.Fatal(err)
			}
			tool, err := tools.Compile(def)
			if err != nil {
				t.Fatal(err)
			}
			in := json.RawMessage(strings.ReplaceAll(tc.input, "URL", d.URL()))
			return tool, tools.Call{Input: in, SessionID: "s", ToolCallID: "c"}
		}
		t.Run(tc.name, func(t *testing.T) {
			target := toolstest.NewDropTarget(t, 1, answer)
			tool, call := compile(t, target)
			for i := range 2 {
				if _, err := tool.Run(context.Background(), call); err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
			if got := len(target.Requests()); got != 2 {
				t.Fatalf("target saw %d requests for 2 calls, want 2", got)
			}

			dropping := toolstest.NewDropTarget(t, 0, nil)
			tool, call = compile(t, dropping)
			_, err := tool.Run(context.Background(), call)
			toolstest.ToolError(t, err, true)
			if got := len(dropping.Requests()); got != 1 {
				t.Fatalf("target saw %d requests for 1 call, want 1", got)
			}
		})
	}
}
