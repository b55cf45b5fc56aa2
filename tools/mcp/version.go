package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxRejectBody caps the error body read from a rejected server/discover.
const maxRejectBody = 64 << 10

// versionRetry sends a server/discover again, once, when the server
// rejected it with UnsupportedProtocolVersion (-32022) while listing the
// version sent among those it supports (SEP-2575: the client retries
// with a supported version). A supported version other than the one sent
// is mcp-go's to pick (it renegotiates); the same version means the
// rejection was not about the version brain can change, and the request
// is repeated as is. Only server/discover, which changes nothing on the
// server, is ever sent twice.
type versionRetry struct{ next http.RoundTripper }

func (v versionRetry) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Header.Get(mcp.HeaderMethod) != string(mcp.MethodServerDiscover) || req.Body == nil {
		return v.next.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRejectBody))
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	resp, err := v.next.RoundTrip(withBody(req, body))
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	reject, rerr := io.ReadAll(io.LimitReader(resp.Body, maxRejectBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(reject))
	if rerr != nil || !rejectsSupported(reject, req.Header.Get(mcp.HeaderProtocolVersion)) {
		return resp, nil
	}
	return v.next.RoundTrip(withBody(req, body))
}

func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = nil // sent once per RoundTrip (tools.OnceTransport)
	return r
}

// rejectsSupported reports whether body is an UnsupportedProtocolVersion
// error that lists version as supported.
func rejectsSupported(body []byte, version string) bool {
	var msg struct {
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Error == nil || version == "" {
		return false
	}
	return msg.Error.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION && slices.Contains(msg.Error.Data.Supported, version)
}
