package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"brain/tools"
	brainmcp "brain/tools/mcp"
)

// token is the bearer token of the HTTP peer; it must never show up in a
// result, an error or a log.
const token = "tok-3f9a2c7e1d5b4a6c"

// peerEnv, set to "stdio" in a child's environment, makes the test binary
// serve the peer over stdio instead of running tests.
const peerEnv = "BRAIN_MCP_PEER"

func TestMain(m *testing.M) {
	if os.Getenv(peerEnv) == "stdio" {
		if err := server.ServeStdio(stdioPeer()); err != nil {
			fmt.Fprintln(os.Stderr, "peer:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// peer records what the server side saw.
type peer struct {
	cancelled chan struct{} // closed when the block tool saw its context end
	once      sync.Once
}

func text(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }

// newPeer builds the MCP server the tests talk to, over HTTP or stdio.
func newPeer() (*server.MCPServer, *peer) {
	p := &peer{cancelled: make(chan struct{})}
	srv := server.NewMCPServer("peer", "1.0.0",
		server.WithToolCapabilities(true), server.WithResourceCapabilities(false, true))
	add := func(t mcp.Tool, h server.ToolHandlerFunc) { srv.AddTool(t, h) }

	add(mcp.NewTool("greet", mcp.WithDescription("Greets someone"), mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("hello " + r.GetString("name", "")), nil
		})
	add(mcp.NewTool("fail", mcp.WithDescription("Reports an error")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("quota exceeded"), nil
		})
	add(mcp.NewTool("broken", mcp.WithDescription("Its handler returns a Go error")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("database is locked")
		})
	add(mcp.NewTool("block", mcp.WithDescription("Blocks until cancelled")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			p.once.Do(func() { close(p.cancelled) })
			return nil, ctx.Err()
		})
	add(mcp.NewTool("leak", mcp.WithDescription("Echoes the secret it was given")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"auth": "Bearer " + token}, "your token is "+token), nil
		})
	add(mcp.NewTool("structured", mcp.WithDescription("Returns structured content")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"sum": 5}, "sum is 5"), nil
		})
	add(mcp.NewTool("image", mcp.WithDescription("Returns an image")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultImage("look", "aGVsbG8=", "image/png"), nil
		})
	add(mcp.NewTool("progress", mcp.WithDescription("Reports progress twice")),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r.Params.Meta != nil && r.Params.Meta.ProgressToken != nil {
				for i := 1; i <= 2; i++ {
					_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
						map[string]any{"progressToken": r.Params.Meta.ProgressToken, "progress": i, "total": 2})
				}
			}
			return text("done"), nil
		})
	// A schema a struct would not keep: anyOf at the top level.
	add(mcp.NewToolWithRawSchema("pick", "Takes a or b",
		json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("picked"), nil })

	srv.AddResource(mcp.NewResource("docs://readme", "readme", mcp.WithMIMEType("text/plain")),
		func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: "read me first"}}, nil
		})
	return srv, p
}

// stdioPeer is newPeer plus tools that only make sense in a child process.
func stdioPeer() *server.MCPServer {
	srv, _ := newPeer()
	srv.AddTool(mcp.NewTool("pid", mcp.WithDescription("Returns its pid")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(os.Getpid())), nil
		})
	srv.AddTool(mcp.NewTool("spawn", mcp.WithDescription("Starts a grandchild, returns its pid")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			return text(fmt.Sprint(cmd.Process.Pid)), nil
		})
	srv.AddTool(mcp.NewTool("env", mcp.WithDescription("Returns its environment and working directory")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			wd, _ := os.Getwd()
			return text(strings.Join(append(os.Environ(), "CWD="+wd), "\n")), nil
		})
	srv.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exits while handling the call")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	srv.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("Adds the tool added")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv.AddTool(mcp.NewTool("added", mcp.WithDescription("Added at runtime")),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("new"), nil })
			return text("ok"), nil
		})
	return srv
}

// httpPeer serves srv over streamable HTTP, answering 401 without the
// bearer token. Swap replaces the server behind the URL (a restart).
type httpPeer struct {
	*httptest.Server
	h atomic.Pointer[http.Handler]

	mu        sync.Mutex
	sessions  map[string]bool // seen on requests
	forgotten map[string]bool // sessions of servers swapped out
}

func newHTTPPeer(t *testing.T, srv *server.MCPServer) *httpPeer {
	t.Helper()
	hp := &httpPeer{sessions: map[string]bool{}, forgotten: map[string]bool{}}
	hp.Swap(srv)
	hp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		// mcp-go accepts any well-formed session id; a restarted server
		// does not know the old ones.
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			hp.mu.Lock()
			gone := hp.forgotten[id]
			hp.sessions[id] = true
			hp.mu.Unlock()
			if gone {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		(*hp.h.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(hp.Close)
	return hp
}

// Swap puts srv behind the URL, as if the server restarted: the sessions
// seen so far are answered 404.
func (hp *httpPeer) Swap(srv *server.MCPServer) {
	hp.mu.Lock()
	for id := range hp.sessions {
		hp.forgotten[id] = true
	}
	hp.mu.Unlock()
	var h http.Handler = server.NewStreamableHTTPServer(srv)
	hp.h.Store(&h)
}

func (hp *httpPeer) config(id string) brainmcp.ServerConfig {
	return brainmcp.ServerConfig{ID: id, Transport: brainmcp.TransportHTTP, URL: hp.URL + "/mcp", BearerToken: token}
}

// logBuffer collects log lines, safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLog() (*slog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// connect starts a bridge and closes it when the test ends.
func connect(t *testing.T, servers []brainmcp.ServerConfig, opts ...brainmcp.Option) (*brainmcp.Bridge, *logBuffer) {
	t.Helper()
	log, buf := newLog()
	b := brainmcp.Connect(context.Background(), servers, log, opts...)
	t.Cleanup(func() {
		b.Close()
		if strings.Contains(buf.String(), token) {
			t.Errorf("the log leaks the token:\n%s", buf)
		}
	})
	return b, buf
}

// find returns the bridged tool called name, compiled as the engine would.
func find(t *testing.T, b *brainmcp.Bridge, name string) *tools.Tool {
	t.Helper()
	for _, d := range b.Tools() {
		if d.Name == name {
			tool, err := tools.Compile(d)
			if err != nil {
				t.Fatalf("compile %s: %v", name, err)
			}
			return tool
		}
	}
	t.Fatalf("no tool %s in %v", name, names(b))
	return nil
}

func names(b *brainmcp.Bridge) []string {
	var out []string
	for _, d := range b.Tools() {
		out = append(out, d.Name)
	}
	return out
}

func has(b *brainmcp.Bridge, name string) bool {
	for _, n := range names(b) {
		if n == name {
			return true
		}
	}
	return false
}

// run calls a tool and returns its output or its *tools.Error.
func run(t *testing.T, ctx context.Context, b *brainmcp.Bridge, name, input string) (json.RawMessage, *tools.Error) {
	t.Helper()
	tool := find(t, b, name)
	if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
		t.Fatalf("%s: input %s rejected: %v", name, input, err)
	}
	out, err := tool.Run(ctx, tools.Call{Input: json.RawMessage(input), SessionID: "s1", ToolCallID: "c1"})
	if err == nil {
		if bytes.Contains(out, []byte(token)) {
			t.Fatalf("%s: output leaks the token: %s", name, out)
		}
		return out, nil
	}
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("%s: error %v (%T) is not a *tools.Error", name, err, err)
	}
	if strings.Contains(te.Message, token) {
		t.Fatalf("%s: error leaks the token: %s", name, te.Message)
	}
	return nil, te
}

// content is the "content" text of a bridged tool's output.
func content(t *testing.T, out json.RawMessage) string {
	t.Helper()
	var v struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	return v.Content
}

// eventually polls cond until it holds or 10 seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
