package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"
)

// RequestFailure says why an HTTP request (or the read of its body) failed,
// for a tool error: the call's own timeout (ctx's cause is timedOut, set
// with context.WithTimeoutCause after timeout), the call's deadline,
// cancellation, or else err's text without the *url.Error wrapper, whose
// text repeats the URL and so any key in its query. The caller scrubs what
// it returns of its own secrets.
func RequestFailure(ctx context.Context, err, timedOut error, timeout time.Duration) string {
	switch {
	case errors.Is(context.Cause(ctx), timedOut):
		return "timed out after " + timeout.String()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timed out: the call's deadline passed"
	case ctx.Err() != nil:
		return "cancelled"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return "timed out: " + ue.Err.Error()
		}
		err = ue.Err
	}
	return err.Error()
}

// DialFailed reports whether err comes from establishing a connection (to
// the service or a proxy), before any byte of the request was written.
func DialFailed(err error) bool {
	for err != nil {
		var op *net.OpError
		if !errors.As(err, &op) {
			return false
		}
		if op.Op == "dial" {
			return true
		}
		err = op.Err
	}
	return false
}

// TracesConnections reports whether c's transport reports
// httptrace.ClientTrace.GotConn, so that a request that failed without
// one provably sent nothing. A RoundTripper of the caller's own may not.
func TracesConnections(c *http.Client) bool {
	switch c.Transport.(type) {
	case nil, *http.Transport:
		return true
	}
	return false
}

// MarshalUnescaped is json.Marshal without escaping <, > and & for HTML:
// a model reads results as text, and each escaped '<' costs six bytes.
func MarshalUnescaped(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}
