package github

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"brain/tools"
	"brain/tools/toolstest"
)

// newDropGitHub is a GitHub that answers the first `answered` requests of
// each connection with an issue, keeping the connection alive, and drops
// the connection on the next one.
func newDropGitHub(t *testing.T, answered int) *toolstest.DropTarget {
	t.Helper()
	issue := toolstest.JSON(`{"id":1,"number":1,"title":"Found a bug","state":"open","comments":0,"html_url":"https://github.com/acme/widgets/issues/1"}`)
	return toolstest.NewDropTarget(t, answered, func(*http.Request, []byte) (toolstest.Response, bool) { return issue, true })
}

// TestDispatch_AtMostOnce: against a GitHub that drops the second request
// of a connection, two calls reach it exactly twice and both succeed (no
// connection is reused, so none is replayed); a call whose connection is
// dropped after the write reaches it once and has an unknown outcome.
func TestDispatch_AtMostOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transport func() *http.Transport
	}{
		{"own transport", func() *http.Transport { return nil }},
		{"given transport", func() *http.Transport { return &http.Transport{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := func(d *toolstest.DropTarget) *tools.Tool {
				defs, err := Tools(Config{Token: testToken, BaseURL: d.URL() + "/", Repos: []string{"acme/*"}, Transport: tc.transport()})
				if err != nil {
					t.Fatal(err)
				}
				for _, def := range defs {
					if def.Name == "github_get_issue" {
						compiled, err := tools.Compile(def)
						if err != nil {
							t.Fatal(err)
						}
						return compiled
					}
				}
				t.Fatal("no github_get_issue")
				return nil
			}
			call := tools.Call{Input: json.RawMessage(`{"repo":"acme/widgets","number":1}`)}
			target := newDropGitHub(t, 1)
			get := tool(target)
			for i := range 2 {
				if _, err := get.Run(context.Background(), call); err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
			if got := len(target.Requests()); got != 2 {
				t.Fatalf("GitHub saw %d requests for 2 calls, want 2", got)
			}

			dropping := newDropGitHub(t, 0)
			_, err := tool(dropping).Run(context.Background(), call)
			toolstest.ToolError(t, err, true, "after the request was sent")
			if got := len(dropping.Requests()); got != 1 {
				t.Fatalf("GitHub saw %d requests for 1 call, want 1", got)
			}
		})
	}
}
