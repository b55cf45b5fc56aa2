package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"brain/tools"
)

// errorBodyCap bounds what is read of a non-2xx body: only an excerpt is
// shown.
const errorBodyCap = 64 << 10

// maxExcerpt is the most of a response body a message quotes, in characters.
const maxExcerpt = 500

// errTimedOut is the cause of the request context when Spec.Timeout passes.
var errTimedOut = errors.New("request timed out")

// send makes the request with key as its Idempotency-Key and turns the
// answer into a result or a tools.Error. It never retries, but for the
// one case where the service refused the request unread: a 401 with an
// OAuth token, sent again once with a fresh token (Bearer).
func (e *endpoint) send(ctx context.Context, call tools.Call, key string) (json.RawMessage, error) {
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, e.timeout, errTimedOut)
		defer cancel()
	}
	e, token, err := e.authorized(ctx, call, "")
	if err != nil {
		return nil, err
	}
	resp, err := e.do(ctx, call.Input, key, token)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized && e.bearer != nil {
		drain(resp)
		if e, token, err = e.authorized(ctx, call, token); err != nil {
			return nil, err
		}
		if resp, err = e.do(ctx, call.Input, key, token); err != nil {
			return nil, err
		}
	}
	defer resp.Body.Close()
	return e.answer(ctx, resp)
}

// authorized gets the call's token from the Bearer (stale: the token the
// service just refused) and returns the endpoint as this call sees it:
// its scrubber also redacts the token, so no message or result of the
// call can carry it. Without a Bearer it is e, with no token.
func (e *endpoint) authorized(ctx context.Context, call tools.Call, stale string) (*endpoint, string, error) {
	if e.bearer == nil {
		return e, "", nil
	}
	token, err := e.bearer(ctx, call, stale)
	if err == nil && (strings.TrimSpace(token) == "" || strings.ContainsAny(token, "\r\n\x00")) {
		err = errors.New("the connection's token is empty or malformed")
	}
	if err != nil {
		if _, ok := tools.AsConnectionRequired(err); ok {
			return nil, "", err
		}
		// Scrub with the stale token too: a provider's error may echo it.
		reason := tools.NewScrubber(append(slices.Clone(e.secrets), stale)...).String(err.Error())
		if stale != "" {
			return nil, "", tools.Failed("%s: HTTP 401 Unauthorized, and getting a fresh OAuth token failed: %s; the service refused the request",
				e.target, reason)
		}
		return nil, "", tools.Failed("%s: get the OAuth token: %s; nothing was sent", e.target, reason)
	}
	c := *e
	c.scrub = tools.NewScrubber(append(slices.Clone(e.secrets), token, stale)...)
	return &c, token, nil
}

// do sends one request. Its errors say whether anything may have reached
// the service.
func (e *endpoint) do(ctx context.Context, input json.RawMessage, key, token string) (*http.Response, error) {
	// A connection obtained is the last point before bytes of this request
	// can leave; without one, nothing was sent.
	var connected atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})
	req, err := e.request(ctx, input, key)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, e.sendError(ctx, err, connected.Load())
	}
	return resp, nil
}

// drain reads a little of a refused response's body and closes it, so
// its connection can carry the next request.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyCap))
	resp.Body.Close()
}

// request builds the request; its errors come before dispatch.
func (e *endpoint) request(ctx context.Context, input json.RawMessage, key string) (*http.Request, error) {
	args := bytes.TrimSpace(input)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		return nil, tools.Failed("%s: arguments are not valid JSON; nothing was sent", e.target)
	}
	u := *e.url
	var body io.Reader
	if e.query {
		params, err := queryParams(args)
		if err != nil {
			return nil, tools.Failed("%s: %v; nothing was sent", e.target, err)
		}
		q := u.Query()
		for k, vs := range params {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
		u.RawQuery = q.Encode()
	} else {
		body = bytes.NewReader(args)
	}
	req, err := http.NewRequestWithContext(ctx, e.method, u.String(), body)
	if err != nil {
		// The error would quote the URL; the URL was checked in New anyway.
		return nil, tools.Failed("%s: could not build the request; nothing was sent", e.target)
	}
	// The client's transport never re-sends (tools.OnceTransport); without
	// GetBody, a caller's own RoundTripper or a 307/308 redirect cannot
	// replay a body already written either.
	req.GetBody = nil
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range e.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Idempotency-Key", key)
	if e.host != "" {
		req.Host = e.host
	}
	return req, nil
}

// queryParams turns the top-level scalar fields of an object into query
// parameters; an array of scalars repeats its key; null is left out.
func queryParams(args []byte) (url.Values, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	q := url.Values{}
	for _, k := range keys {
		v := obj[k]
		if list, ok := v.([]any); ok {
			for _, item := range list {
				s, ok := scalar(item)
				if !ok {
					return nil, fmt.Errorf("argument %q holds a non-scalar item and cannot be sent as a query parameter", k)
				}
				q.Add(k, s)
			}
			continue
		}
		if v == nil {
			continue
		}
		s, ok := scalar(v)
		if !ok {
			return nil, fmt.Errorf("argument %q is an object and cannot be sent as a query parameter", k)
		}
		q.Add(k, s)
	}
	return q, nil
}

func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// sendError classifies a failed client.Do. It is tools.Failed only when it is
// proven that nothing was sent: no connection was obtained and either the
// transport reports connections (httptrace) or the error is a dial error.
// A dial error alone is no proof once a connection was obtained: net/http
// redials to retry a request it wrote on a reused connection.
func (e *endpoint) sendError(ctx context.Context, err error, connected bool) error {
	reason := e.reason(ctx, err)
	if !connected && (e.traced || tools.DialFailed(err)) {
		return tools.Failed("%s: %s; nothing was sent", e.target, reason)
	}
	return tools.Unknown("%s: %s; the request may have reached the service", e.target, reason)
}

// reason says why a request or a body read failed, without the URL (whose
// query may hold a key) and with secrets scrubbed.
func (e *endpoint) reason(ctx context.Context, err error) string {
	return e.scrub.String(tools.RequestFailure(ctx, err, errTimedOut, e.timeout))
}

// answer turns a response into the result or an error. Everything here
// happens after dispatch.
func (e *endpoint) answer(ctx context.Context, resp *http.Response) (json.RawMessage, error) {
	code := resp.StatusCode
	ok := code >= 200 && code <= 299
	limit := e.maxBytes
	if !ok && limit > errorBodyCap {
		limit = errorBodyCap
	}
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	over := int64(len(body)) > limit
	if over {
		body = body[:limit]
	}
	if !ok {
		// The status decides, even if the body could not be read in full.
		return nil, e.statusError(code, body, over || readErr != nil)
	}
	if readErr != nil {
		return nil, tools.Unknown("%s: HTTP %d, then reading the response failed: %s; the request was sent", e.target, code, e.reason(ctx, readErr))
	}
	if over {
		return nil, tools.Unknown("%s: HTTP %d, response over %d bytes; the request was sent and its result dropped", e.target, code, e.maxBytes)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return json.RawMessage(fmt.Sprintf(`{"status":%d}`, code)), nil
	}
	if !json.Valid(body) {
		return nil, tools.Unknown("%s: HTTP %d returned invalid JSON; the request was sent: %s", e.target, code, e.excerpt(body, false))
	}
	return e.scrub.JSON(body), nil
}

// statusError is the error for a non-2xx answer. A 4xx other than 408 and
// 429 means the service refused the request, so the outcome is known;
// anything else (5xx, 408, 429, an unfollowed 3xx) may have had its effect.
func (e *endpoint) statusError(code int, body []byte, truncated bool) error {
	msg := fmt.Sprintf("%s: HTTP %d", e.target, code)
	if text := http.StatusText(code); text != "" {
		msg += " " + text
	}
	if ex := e.excerpt(body, truncated); ex != "" {
		msg += ": " + ex
	}
	refused := code >= 400 && code <= 499 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
	return &tools.Error{Message: msg, UnknownOutcome: !refused}
}

// excerpt is a short, one-line, scrubbed quote of a body. truncated says the
// body was cut: its tail may hold part of a secret, which no pattern would
// match, so the last longest-secret bytes are dropped first.
func (e *endpoint) excerpt(body []byte, truncated bool) string {
	if truncated {
		body = body[:max(0, len(body)-e.scrub.Longest())]
	}
	t := e.scrub.String(string(e.scrub.JSON(bytes.TrimSpace(body))))
	t = strings.Join(strings.Fields(strings.ToValidUTF8(t, "\uFFFD")), " ")
	return clip(t, maxExcerpt)
}

// clip cuts s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
