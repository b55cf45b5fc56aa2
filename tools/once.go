package tools

import (
	"crypto/tls"
	"net/http"
	"slices"
)

// OnceTransport returns a copy of base that sends each request at most
// once: every tool family dispatches through it, so a call reaches the
// service once or, when the connection fails after the write, is reported
// with an unknown outcome. It is never silently sent again.
//
// net/http's Transport sends a request again on a new connection when a
// reused keep-alive connection fails after the write, provided the request
// is "replayable": no body (or a GetBody) and a GET, HEAD, OPTIONS or TRACE
// method or an Idempotency-Key header (Request.isReplayable,
// persistConn.shouldRetryRequest). It never does so when the connection
// was a new one. So the copy
//
//   - turns keep-alives off: each request gets a connection of its own,
//     never a reused one, and the retry condition cannot hold;
//   - speaks HTTP/1.1 only: the HTTP/2 transport re-sends a bodiless
//     request, or one with GetBody, after a stream reset
//     (http2canRetryError), even on a new connection.
//
// The cost is a new TCP (and TLS) connection per call, which a tool call
// can afford. Everything else of base is kept: its dialer (tools/web's
// address guard checks what is dialled), proxy, TLS config and timeouts.
// base is not changed; nil means http.DefaultTransport.
func OnceTransport(base *http.Transport) *http.Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	t.DisableKeepAlives = true
	t.ForceAttemptHTTP2 = false
	var p http.Protocols
	p.SetHTTP1(true)
	t.Protocols = &p
	// An empty map is the documented way to turn HTTP/2 off; a used base
	// has the bundled HTTP/2 registered here and "h2" in its ALPN list.
	t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	if t.TLSClientConfig != nil {
		t.TLSClientConfig.NextProtos = slices.DeleteFunc(slices.Clone(t.TLSClientConfig.NextProtos),
			func(proto string) bool { return proto == "h2" })
	}
	return t
}

// OnceClient returns a copy of c whose transport sends each request at most
// once (OnceTransport). A nil or *http.Transport transport is replaced by
// its once copy; any other RoundTripper is kept as it is, and whoever
// supplied it answers for not re-sending.
func OnceClient(c *http.Client) *http.Client {
	out := *c
	switch t := c.Transport.(type) {
	case nil:
		out.Transport = OnceTransport(nil)
	case *http.Transport:
		out.Transport = OnceTransport(t)
	}
	return &out
}

// KeyedClient is the client for calls to a service that takes a key in a
// header or the URL: the OnceClient copy of c or, when c is nil, one of its
// own that sends each request at most once and follows no redirects
// (net/http would forward custom headers, the key among them, to the new
// location).
func KeyedClient(c *http.Client) *http.Client {
	if c != nil {
		return OnceClient(c)
	}
	return &http.Client{
		Transport:     OnceTransport(nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
