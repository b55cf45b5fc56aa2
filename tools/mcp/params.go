package mcp

import (
	"context"
	"encoding/json"
	"math"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// paramHeaders maps each top-level property of a tool's input schema
// that has an x-mcp-header annotation to that header's name (SEP-2243).
// Only tools whose annotations are all valid are offered (headerProblem),
// so every name here is a valid, unique token.
func paramHeaders(schema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Header *string `json:"x-mcp-header"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out map[string]string
	for name, p := range s.Properties {
		if p.Header == nil || *p.Header == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = *p.Header
	}
	return out
}

// mirror is the Mcp-Param-* headers of a tools/call on 2026-07-28: each
// annotated argument's value, encoded per SEP-2243 (Base64 in the
// =?base64?…?= wrapper when it is not plain printable ASCII without
// surrounding space). A null or absent argument has no header; a value
// that is not a string, boolean or safe integer is not mirrored (the
// server sees it in the body).
func mirror(headers map[string]string, args json.RawMessage) http.Header {
	if len(headers) == 0 {
		return nil
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil {
		return nil
	}
	out := http.Header{}
	for prop, name := range headers {
		raw, ok := in[prop]
		if !ok {
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		if f, ok := v.(float64); ok {
			if f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
				continue
			}
			v = int64(f)
		}
		if s, ok := mcp.EncodeHeaderValue(v); ok {
			out.Set(mcp.HeaderParamPrefix+name, s)
		}
	}
	return out
}

// paramsKey carries a call's Mcp-Param-* headers to request.
type paramsKey struct{}

func withParams(ctx context.Context, h http.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, paramsKey{}, h)
}

func paramsOf(ctx context.Context) http.Header {
	h, _ := ctx.Value(paramsKey{}).(http.Header)
	return h
}
