package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"brain/tools"
	brainmcp "brain/tools/mcp"
)

// writePeer is a tracker: a read-only lookup, an annotated write, a tool
// without hints and one marked read-only but destructive. calls counts the
// tools/call requests that reached a handler, by tool.
func writePeer() (*server.MCPServer, map[string]*atomic.Int64) {
	srv := server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))
	calls := map[string]*atomic.Int64{}
	add := func(t mcp.Tool) {
		n := &atomic.Int64{}
		calls[t.Name] = n
		srv.AddTool(t, func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n.Add(1)
			return mcp.NewToolResultText(t.Name + " " + r.GetString("title", "")), nil
		})
	}
	add(mcp.NewTool("lookup", mcp.WithDescription("Look up an issue"), mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false)))
	add(mcp.NewTool("create_issue", mcp.WithDescription("Create an issue"), mcp.WithTitleAnnotation("Create issue"),
		mcp.WithString("title", mcp.Required()), mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false)))
	add(mcp.NewToolWithRawSchema("unhinted", "No hints at all", json.RawMessage(`{"type":"object"}`)))
	add(mcp.NewTool("purge", mcp.WithDescription("Read-only, yet destructive"), mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(true)))
	return srv, calls
}

func TestBridge_ApprovalModes(t *testing.T) {
	srv, _ := writePeer()
	hp := newHTTPPeer(t, srv)
	cases := []struct {
		name    string
		mode    string
		perTool map[string]string
		waits   map[string]bool
	}{
		{"default never", "", nil, map[string]bool{"lookup": false, "create_issue": false, "unhinted": false, "purge": false}},
		{"always", brainmcp.ApprovalAlways, nil, map[string]bool{"lookup": true, "create_issue": true, "unhinted": true, "purge": true}},
		{"annotations", brainmcp.ApprovalAnnotations, nil, map[string]bool{"lookup": false, "create_issue": true, "unhinted": true, "purge": true}},
		{"per tool", brainmcp.ApprovalAnnotations, map[string]string{"unhinted": brainmcp.ApprovalNever, "lookup": brainmcp.ApprovalAlways},
			map[string]bool{"lookup": true, "create_issue": true, "unhinted": false, "purge": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := hp.config("tracker")
			cfg.Approval, cfg.ToolApproval = tc.mode, tc.perTool
			b, _ := connect(t, []brainmcp.ServerConfig{cfg})
			for tool, want := range tc.waits {
				d := find(t, b, "tracker__"+tool)
				if d.NeedsApproval() != want {
					t.Errorf("%s waits = %v, want %v", tool, d.NeedsApproval(), want)
				}
				if got := strings.Contains(d.Description, "waits for a person's approval"); got != want {
					t.Errorf("%s: description %q marks it waiting = %v, want %v", tool, d.Description, got, want)
				}
			}
		})
	}
}

func TestBridge_ApprovalInvalidModeSkipsServer(t *testing.T) {
	srv, _ := writePeer()
	hp := newHTTPPeer(t, srv)
	cfg := hp.config("tracker")
	cfg.ToolApproval = map[string]string{"lookup": "sometimes"}
	b, logs := connect(t, []brainmcp.ServerConfig{cfg})
	if len(b.Tools()) != 0 || !strings.Contains(logs.String(), `approval must be`) {
		t.Fatalf("tools %v; log:\n%s", names(b), logs)
	}
}

func TestBridge_ApprovalPreviewSendsNothingApplySendsOnce(t *testing.T) {
	srv, calls := writePeer()
	hp := newHTTPPeer(t, srv)
	cfg := hp.config("tracker")
	cfg.Approval = brainmcp.ApprovalAnnotations
	b, _ := connect(t, []brainmcp.ServerConfig{cfg})
	tool := find(t, b, "tracker__create_issue")
	ctx := context.Background()
	in := json.RawMessage(`{"title":"Fix login"}`)
	call := tools.Call{Input: in, SessionID: "s1", ToolCallID: "c1"}

	card, err := tool.Preview(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls["create_issue"].Load(); n != 0 {
		t.Fatalf("the preview reached the server %d times", n)
	}
	want := map[string]string{"Tool": "create_issue", "Server": "tracker", "Title": "Create issue",
		"Description": "Create an issue", "Arguments": `{"title":"Fix login"}`}
	got := map[string]string{}
	for _, f := range card.Facts {
		got[f.Label] = f.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("card fact %s = %q, want %q (card %+v)", k, got[k], v, card)
		}
	}
	if card.Title != "Create issue on tracker" {
		t.Errorf("card title %q", card.Title)
	}

	out, err := tool.Apply(ctx, call, tools.Decision{ID: "d1", By: "U1"})
	if err != nil || content(t, out) != "create_issue Fix login" {
		t.Fatalf("apply: %s, %v", out, err)
	}
	if n := calls["create_issue"].Load(); n != 1 {
		t.Fatalf("the apply reached the server %d times, want once", n)
	}
}

// An apply whose answer is lost has an unknown outcome (the engine marks
// the approval unconfirmed) and is not sent a second time.
func TestBridge_ApprovalLostAnswerIsUnknown(t *testing.T) {
	srv, calls := writePeer()
	inner := server.NewStreamableHTTPServer(srv)
	var cut atomic.Bool
	var posts atomic.Int64
	hp := newHTTPPeer(t, srv)
	hp.h.Store(ptr(http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cut.Load() && r.Method == http.MethodPost && isCall(r) {
			posts.Add(1)
			// The request arrived; the answer never leaves.
			inner.ServeHTTP(discard{w.Header()}, r)
			panic(http.ErrAbortHandler)
		}
		inner.ServeHTTP(w, r)
	}))))
	cfg := hp.config("tracker")
	cfg.Approval = brainmcp.ApprovalAlways
	b, _ := connect(t, []brainmcp.ServerConfig{cfg})
	tool := find(t, b, "tracker__create_issue")
	cut.Store(true)
	_, err := tool.Apply(context.Background(), tools.Call{Input: json.RawMessage(`{"title":"x"}`)}, tools.Decision{ID: "d1"})
	var te *tools.Error
	if !errors.As(err, &te) || !te.UnknownOutcome {
		t.Fatalf("apply with a lost answer: %v, want an unknown outcome", err)
	}
	if n, p := calls["create_issue"].Load(), posts.Load(); n != 1 || p != 1 {
		t.Fatalf("the server got the call %d times in %d posts, want once", n, p)
	}
}

func ptr[T any](v T) *T { return &v }

// isCall reports whether r posts a tools/call (not the subscriptions/listen
// stream or a tools/list of a 2026-07-28 connection), leaving its body
// readable.
func isCall(r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Method == "tools/call"
}

// discard is a ResponseWriter that drops the body.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}
