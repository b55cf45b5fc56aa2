package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"brain/internal/oauthclient"
	"brain/tools"
)

// clientInfo is what brain tells servers it is.
var clientInfo = mcp.Implementation{Name: "brain", Version: clientVersion}

// clientVersion is what brain tells servers in clientInfo.
const clientVersion = "1"

// cancelTimeout bounds sending notifications/cancelled for a call whose
// context ended.
const cancelTimeout = time.Second

// maxPages bounds how many pages of a paginated list are followed.
const maxPages = 100

// conn is one live connection to a server.
type conn struct {
	s         *server
	client    *client.Client
	tr        transport.Interface
	http      *http.Transport // HTTP only (nil for stdio); closed with the conn
	resources bool
	proc      *process     // stdio only
	stderr    *tailBuffer  // stdio only
	lost      atomic.Bool  // the connection is gone; calls fail before dispatch
	ids       atomic.Int64 // for request ids and progress tokens
	progress  sync.Map     // progress token -> chan progressNote
	closeOnce sync.Once
	version   string // the protocol revision negotiated
	unlisten  func() // ends the subscriptions/listen stream (2026-07-28)
	calls     inflight
}

// connect starts the server, runs the handshake and lists the tools. On
// error the returned conn (possibly nil) is already closed; it carries the
// child's stderr for the log.
func (s *server) connect(ctx context.Context) (*conn, []listedTool, error) {
	return s.connectAs(ctx, nil)
}

// connectAs is connect with tokens instead of the server's own (a
// person's connection, for a per-person server's session).
func (s *server) connectAs(ctx context.Context, tokens oauthclient.Tokens) (*conn, []listedTool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.opts.connectTimeout)
	defer cancel()
	c := &conn{s: s}
	version, auto := s.protocolFor()
	tlog := slog.New(demoteHandler{s.log.Handler()})
	switch s.cfg.Transport {
	case TransportStdio:
		p, err := newProcess(s.cfg)
		if err != nil {
			return nil, nil, err
		}
		c.proc, c.stderr = p, p.stderr
		c.tr = transport.NewStdioWithOptions(s.cfg.Command, nil, s.cfg.Args,
			transport.WithCommandFunc(p.command), transport.WithCommandLogger(tlog))
	case TransportHTTP:
		hc := httpClient()
		c.http = hc.Transport.(*http.Transport)
		hc.Transport = versionRetry{next: hc.Transport}
		s.oauthClient(hc, tokens)
		opts := []transport.StreamableHTTPCOption{
			transport.WithHTTPBasicClient(hc),
			transport.WithHTTPLogger(tlog),
		}
		if s.cfg.BearerToken != "" {
			opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + s.cfg.BearerToken}))
		}
		if !mcp.IsModernProtocol(version) {
			//lint:ignore SA1019 on 2025-11-25 the standalone GET stream is what carries list_changed.
			opts = append(opts, transport.WithContinuousListening())
		}
		tr, err := transport.NewStreamableHTTP(s.cfg.URL, opts...)
		if err != nil {
			return nil, nil, errors.New("invalid url")
		}
		c.tr = tr
	}
	c.client = client.NewClient(c.tr, client.WithProtocolVersion(version), client.WithDiscoverTimeout(s.b.opts.discoverTimeout),
		client.WithElicitationHandler(elicitor{c}), client.WithClientCapabilities(capabilities()))
	// Before Start and Initialize: a server may announce list_changed as
	// soon as it is initialized.
	c.client.OnNotification(c.notify)
	// Start takes the bridge's lifetime: the stdio transport keeps it for
	// the server's requests, the HTTP one for its GET stream.
	if err := c.client.Start(s.b.life); err != nil {
		c.close()
		return c, nil, fmt.Errorf("start: %w", err)
	}
	if c.proc != nil {
		c.proc.started()
	}
	init, err := c.client.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: version,
		ClientInfo:      clientInfo,
	}})
	if err != nil {
		c.close()
		return c, nil, fmt.Errorf("initialize: %w", describeInit(ctx, err))
	}
	c.resources = init.Capabilities.Resources != nil
	c.version = c.client.ProtocolVersion()
	s.log.Debug("mcp protocol negotiated", tools.LogProtocol, c.version)
	if s.settle(c, auto) {
		c.close()
		return c, nil, errConnectAgain
	}
	listed, err := c.listTools(ctx)
	if err != nil {
		c.close()
		return c, nil, fmt.Errorf("list tools: %w", err)
	}
	c.listen(init.Capabilities)
	return c, listed, nil
}

func describeInit(ctx context.Context, err error) error {
	var auth *transport.AuthorizationRequiredError
	switch {
	case needsConnection(err):
		return errors.New("the server needs an OAuth connection: connect it (see docs/connections.md), then it is retried")
	case errors.As(err, &auth):
		return errors.New("the server answered 401 Unauthorized: check the bearer token")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("no answer within the connect timeout: %w", err)
	case ctx.Err() != nil:
		return fmt.Errorf("cancelled: %w", err)
	}
	return err
}

// httpClient follows no redirects, so the bearer token never travels to
// another URL, and sends each request at most once (tools.OnceTransport):
// mcp-go's POSTs carry GetBody, which lets net/http's HTTP/2 transport
// re-send a tools/call after a stream reset.
func httpClient() *http.Client {
	return &http.Client{
		Transport:     tools.OnceTransport(nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// close ends the connection; for stdio it kills the child's process group.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.lost.Store(true)
		if c.client == nil {
			return
		}
		if c.unlisten != nil {
			c.unlisten()
		}
		if c.proc == nil {
			_ = c.client.Close()
			if c.http != nil {
				c.http.CloseIdleConnections()
			}
			return
		}
		c.proc.stop(func() { _ = c.client.Close() })
	})
}

// notify handles a server notification. It runs on the transport's reader:
// it must not block.
func (c *conn) notify(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		c.s.log.Debug("mcp server announced a tool list change")
		c.s.poke()
	case mcp.MethodNotificationSubscriptionsAcknowledged:
		// The listen stream is up: list again once, for a change made
		// between the first list and now.
		c.s.poke()
	case string(mcp.MethodNotificationProgress):
		f := n.Params.AdditionalFields
		tok, ok := f["progressToken"].(string)
		if !ok {
			return
		}
		if ch, ok := c.progress.Load(tok); ok {
			note := progressNote{Progress: f["progress"], Total: f["total"], Message: f["message"]}
			select {
			case ch.(chan progressNote) <- note:
			default: // progress is best effort
			}
		}
	}
}

type progressNote struct {
	Progress any `json:"progress,omitempty"`
	Total    any `json:"total,omitempty"`
	Message  any `json:"message,omitempty"`
}

func (c *conn) nextID(prefix string) string {
	return prefix + "-" + strconv.FormatInt(c.ids.Add(1), 10)
}

// rpcError is a JSON-RPC error the server answered with.
type rpcError struct {
	Code    int
	Message string
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// sendError is a request that got no answer. sent is false when it is
// certain the request never reached the server; refused is true when the
// server turned it away before acting on it (HTTP 401, 404, other 4xx).
type sendError struct {
	err     error
	sent    bool
	refused bool
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

var statusPattern = regexp.MustCompile(`request failed with status (\d{3})`)

// request sends one JSON-RPC request and returns its raw result. It goes
// to the transport directly, with ids of its own ("brain-N", apart from the
// client's numbers): the client decodes results into structs that drop
// schema keywords and turns error codes into messages without the
// server's text.
func (c *conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if c.lost.Load() {
		return nil, &sendError{err: errors.New("not connected")}
	}
	var gotConn atomic.Bool
	if c.http != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
		})
	}
	id := mcp.NewRequestId(c.nextID("brain"))
	params, header := c.stamp(method, params)
	if header != nil {
		for k, v := range paramsOf(ctx) {
			header[k] = v
		}
	}
	resp, err := c.tr.SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params, Header: header,
	})
	if err != nil {
		se := c.classify(err, gotConn.Load())
		if se.sent && ctx.Err() != nil {
			c.cancel(ctx, id)
		}
		return nil, se
	}
	if resp.Error != nil {
		return nil, &rpcError{Code: resp.Error.Code, Message: resp.Error.Message}
	}
	return resp.Result, nil
}

// classify says whether a failed request may have reached the server, and
// marks the connection lost when it is gone.
func (c *conn) classify(err error, gotConn bool) *sendError {
	se := &sendError{err: err, sent: true}
	var auth *transport.AuthorizationRequiredError
	switch {
	case errors.Is(err, transport.ErrSessionTerminated):
		// The server forgot the session (restarted, expired): it did not
		// act on the request. Reconnect.
		se.refused = true
		c.lost.Store(true)
		c.s.poke()
	case errors.Is(err, transport.ErrTransportClosed):
		// The child exited or the connection closed; the request may have
		// been read before that.
		c.lost.Store(true)
		c.s.poke()
	case errors.As(err, &auth), needsConnection(err):
		se.refused = true
	case errors.Is(err, syscall.EPIPE), errors.Is(err, os.ErrClosed), errors.Is(err, io.ErrClosedPipe):
		// Writing to the child's stdin failed: it never read the request.
		se.sent = false
		c.lost.Store(true)
		c.s.poke()
	}
	if m := statusPattern.FindStringSubmatch(err.Error()); m != nil {
		code, _ := strconv.Atoi(m[1])
		se.refused = code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
	}
	if c.http != nil && !gotConn {
		se.sent = false
	}
	return se
}

// cancel tells the server to stop working on a request whose context
// ended (best effort, bounded by cancelTimeout).
func (c *conn) cancel(ctx context.Context, id mcp.RequestId) {
	reason := "cancelled"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = "timed out"
	}
	nctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer stop()
	_ = c.tr.SendNotification(nctx, mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": reason}},
		},
	})
}

// listTools follows tools/list to its last page.
func (c *conn) listTools(ctx context.Context) ([]listedTool, error) {
	var all []listedTool
	err := c.pages(ctx, "tools/list", func(raw json.RawMessage) (string, error) {
		var page struct {
			Tools      []listedTool `json:"tools"`
			NextCursor string       `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", fmt.Errorf("invalid tools/list result: %v", err)
		}
		all = append(all, page.Tools...)
		return page.NextCursor, nil
	})
	return all, err
}

// pages calls a paginated list method until it has no next cursor.
func (c *conn) pages(ctx context.Context, method string, page func(json.RawMessage) (string, error)) error {
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.request(ctx, method, params)
		if err != nil {
			return err
		}
		next, err := page(raw)
		if err != nil || next == "" {
			return err
		}
		if seen[next] {
			return fmt.Errorf("%s repeated a cursor", method)
		}
		seen[next] = true
		cursor = next
	}
	return fmt.Errorf("%s has more than %d pages", method, maxPages)
}

// demoteHandler logs every record at debug level: the transports' own
// chatter is not news at the level it was written at.
type demoteHandler struct{ inner slog.Handler }

func (h demoteHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.inner.Enabled(ctx, slog.LevelDebug)
}

func (h demoteHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return h.inner.Handle(ctx, r)
}

func (h demoteHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoteHandler{h.inner.WithAttrs(attrs)}
}

func (h demoteHandler) WithGroup(name string) slog.Handler {
	return demoteHandler{h.inner.WithGroup(name)}
}

// stamp adds what 2026-07-28 requires on every request: the protocol
// version, client info and capabilities in the params' _meta, and the
// Mcp-Method and Mcp-Name headers. On 2025-11-25 it changes nothing.
func (c *conn) stamp(method string, params any) (any, http.Header) {
	if !mcp.IsModernProtocol(c.version) {
		return params, nil
	}
	in, _ := params.(map[string]any)
	out := make(map[string]any, len(in)+1)
	meta := map[string]any{}
	for k, v := range in {
		out[k] = v
	}
	if m, ok := in["_meta"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta[mcp.MetaKeyProtocolVersion] = c.version
	meta[mcp.MetaKeyClientInfo] = clientInfo
	meta[mcp.MetaKeyClientCapabilities] = capabilities()
	out["_meta"] = meta
	raw, err := json.Marshal(out)
	if err != nil {
		return out, nil
	}
	header := http.Header{}
	for k, v := range mcp.StandardHeaders(c.version, mcp.MCPMethod(method), raw) {
		header.Set(k, v)
	}
	return out, header
}
