package httptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"brain/tools"
	"brain/tools/httptool"
	"brain/tools/toolstest"
)

// TestDispatch_AtMostOnce calls each method's tool twice, as run and as an
// approved apply, against a target that drops the second request of a
// connection: the target sees each call exactly once and both succeed. A
// call whose connection is dropped after the write reaches the target once
// and has an unknown outcome.
func TestDispatch_AtMostOnce(t *testing.T) {
	send := func(tool *tools.Tool, i int) (json.RawMessage, error) {
		c := tools.Call{Input: json.RawMessage(`{"title":"Printer on fire"}`), SessionID: "sess-1", ToolCallID: fmt.Sprint("call-", i)}
		if tool.NeedsApproval() {
			return tool.Apply(context.Background(), c, tools.Decision{ID: fmt.Sprint("apr-", i), By: "ann"})
		}
		return tool.Run(context.Background(), c)
	}
	for _, method := range []string{"GET", "HEAD", "DELETE", "PUT", "POST", "PATCH", "OPTIONS"} {
		for _, mode := range []string{"run", "apply"} {
			for _, cl := range []struct {
				name   string
				client func() *http.Client
			}{
				{"own client", func() *http.Client { return nil }},
				{"given client", func() *http.Client { return &http.Client{Transport: &http.Transport{}} }},
			} {
				t.Run(method+" "+mode+" "+cl.name, func(t *testing.T) {
					spec := func(url string) httptool.Spec {
						s := ticketSpec(url + "/api/tickets")
						s.Method = method
						if mode == "apply" {
							s.Approval = &httptool.Approval{Title: "Create ticket {{.title}}"}
						}
						return s
					}
					target := toolstest.NewDropTarget(t, 1, nil)
					tool := compile(t, spec(target.URL()), cl.client())
					for i := range 2 {
						if _, err := send(tool, i); err != nil {
							t.Fatalf("call %d: %v", i+1, err)
						}
					}
					if got := len(target.Requests()); got != 2 {
						t.Fatalf("target saw %d requests for 2 calls, want 2", got)
					}

					dropping := toolstest.NewDropTarget(t, 0, nil)
					tool = compile(t, spec(dropping.URL()), cl.client())
					_, err := send(tool, 0)
					toolError(t, err, true)
					if got := len(dropping.Requests()); got != 1 {
						t.Fatalf("target saw %d requests for 1 call, want 1", got)
					}
				})
			}
		}
	}
}
