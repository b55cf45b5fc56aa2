// Package httptool turns a declared HTTP endpoint into a tool: the model's
// arguments become the request, the service's JSON answer becomes the result,
// the request is sent at most once (never re-sent by the transport), and
// every failure says whether it may have reached the service
// (tools.Error.UnknownOutcome). Configured header values are treated as
// secrets: they never appear in errors or results.
//
// It imports only the standard library and brain/tools.
package httptool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"brain/tools"
)

// DefaultMaxResponseBytes caps the response body read when Spec leaves
// MaxResponseBytes at zero.
const DefaultMaxResponseBytes = 1 << 20

// timeoutSlack is added to Spec.Timeout for the engine's per-call bound, so
// the request's own deadline fires first and the error can say what happened.
const timeoutSlack = time.Second

// Spec declares one HTTP endpoint as a tool.
type Spec struct {
	Name, Description string
	// Input and Output are JSON Schemas; Output is optional.
	Input, Output json.RawMessage
	// Method defaults to POST. GET, HEAD and DELETE send the arguments as
	// query parameters instead of a body.
	Method string
	// URL is an absolute http or https URL.
	URL string
	// Headers are sent with every request. Values may hold secrets: they are
	// never put in errors, results or progress, and are scrubbed from
	// response text that echoes them.
	Headers map[string]string
	// Timeout bounds one request, response body included; zero leaves only
	// the engine's per-call deadline.
	Timeout time.Duration
	// Approval nil: the tool runs at once. Set: the tool proposes (Preview)
	// and sends the request only once a person approves (Apply).
	Approval *Approval
	// MaxResponseBytes caps the body read; zero means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Bearer, when set, supplies the OAuth access token each request is
	// sent with (Authorization: Bearer); Headers must not set
	// Authorization then. The token is a secret like a header value.
	Bearer Bearer
}

// Bearer supplies the access token a call is sent with: whose
// connection it is (the workspace's, the requester's, the approver's) is
// the caller's business. stale is "" for the first request; when the
// service answers 401 it is called once more with the refused token and
// must return a fresh one (refreshing it) or fail, and the request is
// sent once more: a 401 means the service refused it, so that is not a
// second delivery. Its errors come before anything was sent; a
// *tools.ConnectionRequired is passed on as is, so the bot layer can send
// the person a connect link.
type Bearer func(ctx context.Context, call tools.Call, stale string) (string, error)

// Approval is the card a person sees before the request is sent. Title and
// every Fact's Label and Value are text/template strings executed with the
// input object as data: "Create ticket {{.title}}". A missing key renders
// as empty text; the function json renders a value as JSON.
type Approval struct {
	Title string
	Facts []Fact
}

// Fact is one labelled line of the approval card.
type Fact struct {
	Label, Value string
}

// New checks spec and returns the tool. Errors name the tool. client nil
// means a client of the package's own (no redirects followed, so configured
// headers never travel to another URL); it is never http.DefaultClient.
// Requests are sent at most once: a given client's *http.Transport (or nil
// transport) is replaced by its tools.OnceTransport copy; another
// RoundTripper must not re-send requests itself.
func New(spec Spec, client *http.Client) (tools.Definition, error) {
	e, err := newEndpoint(spec, client)
	if err != nil {
		return tools.Definition{}, err
	}
	def := tools.Definition{
		Name:        spec.Name,
		Description: spec.Description,
		Input:       spec.Input,
		Output:      spec.Output,
	}
	if spec.Timeout > 0 {
		def.Timeout = spec.Timeout + timeoutSlack
	}
	if spec.Approval == nil {
		def.Run = func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
			if call.SessionID == "" || call.ToolCallID == "" {
				return nil, tools.Failed("%s: no idempotency key: the call has no session or tool call id", e.name)
			}
			return e.send(ctx, call, call.IdempotencyKey())
		}
	} else {
		c, err := parseCard(spec.Name, *spec.Approval)
		if err != nil {
			return tools.Definition{}, err
		}
		def.Preview = func(ctx context.Context, call tools.Call) (tools.Card, error) {
			return c.render(e.name, call.Input)
		}
		def.Apply = func(ctx context.Context, call tools.Call, d tools.Decision) (json.RawMessage, error) {
			if d.ID == "" {
				return nil, tools.Failed("%s: no idempotency key: the decision has no id", e.name)
			}
			return e.send(ctx, call, d.ID)
		}
	}
	if _, err := tools.Compile(def); err != nil {
		return tools.Definition{}, err
	}
	return def, nil
}

// endpoint is a checked Spec, ready to send.
type endpoint struct {
	name     string
	method   string
	url      *url.URL
	target   string // METHOD scheme://host/path: what messages show
	query    bool   // arguments go in the query string, not the body
	header   http.Header
	host     string // a configured Host header, which net/http reads from Request.Host
	timeout  time.Duration
	maxBytes int64
	client   *http.Client
	// traced: the transport reports httptrace.GotConn, so "no connection
	// was obtained" proves nothing was sent.
	traced bool
	scrub  *tools.Scrubber
	// secrets are what scrub redacts; a call's copy adds its token.
	secrets []string
	bearer  Bearer
}

func newEndpoint(spec Spec, client *http.Client) (*endpoint, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("tool %q: "+format, append([]any{spec.Name}, args...)...)
	}
	u, err := url.Parse(spec.URL)
	if err != nil {
		// url.Error repeats the URL, whose query may hold a key.
		return nil, fail("url is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fail("url must be http or https, not %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, fail("url has no host")
	}
	method := strings.ToUpper(strings.TrimSpace(spec.Method))
	if method == "" {
		method = http.MethodPost
	}
	if !isToken(method) {
		return nil, fail("method %q is not a valid HTTP method", spec.Method)
	}
	if spec.Timeout < 0 {
		return nil, fail("timeout is negative")
	}
	if spec.MaxResponseBytes < 0 {
		return nil, fail("max response bytes is negative")
	}
	e := &endpoint{
		name:     spec.Name,
		method:   method,
		url:      u,
		target:   method + " " + safeURL(u),
		query:    method == http.MethodGet || method == http.MethodHead || method == http.MethodDelete,
		header:   http.Header{},
		timeout:  spec.Timeout,
		maxBytes: spec.MaxResponseBytes,
		client:   client,
		bearer:   spec.Bearer,
	}
	if e.maxBytes == 0 {
		e.maxBytes = DefaultMaxResponseBytes
	}
	secrets := tools.URLSecrets(u)
	for k, v := range spec.Headers {
		// Messages name the header, never its value.
		if !isToken(k) {
			return nil, fail("header name %q is not valid", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fail("header %s has a value with a line break or NUL", k)
		}
		switch http.CanonicalHeaderKey(k) {
		case "Idempotency-Key":
			return nil, fail("header Idempotency-Key is set by the tool (the call's or the decision's id)")
		case "Host":
			e.host = v
		case "Authorization":
			if spec.Bearer != nil {
				return nil, fail("header Authorization is set by the tool (the OAuth connection's bearer token)")
			}
			e.header.Set(k, v)
		default:
			e.header.Set(k, v)
		}
		secrets = append(secrets, v)
	}
	e.secrets = secrets
	e.scrub = tools.NewScrubber(secrets...)
	e.client = tools.KeyedClient(e.client)
	e.traced = tools.TracesConnections(e.client)
	return e, nil
}

// safeURL is the URL as messages show it: no user info, no query, no
// fragment, since those may carry credentials.
func safeURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

// isToken reports whether s is an RFC 9110 token (method or header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x7f || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
